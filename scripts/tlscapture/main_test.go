package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// Every recorded hello with an SNI, rewritten to a shorter and a longer
// name, still parses, names the new host and keeps everything else it
// offered; the one without SNI is found to have none.
func TestWithServerName(t *testing.T) {
	for _, tc := range templates {
		msg, err := os.ReadFile(filepath.Join("..", "..", "internal", "tlshello", "testdata", tc.name+".hello"))
		if err != nil {
			t.Fatal(err)
		}
		var orig tlshello.Hello
		if err := tlshello.Parse(msg, &orig); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		off, n, err := sniSpan(msg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if (n == 0) != (len(orig.ServerName) == 0) {
			t.Fatalf("%s: SNI extension of %d bytes, parser's name %q", tc.name, n, orig.ServerName)
		}
		if n == 0 {
			continue
		}
		for _, host := range []string{"a.b", "www.a-much-longer-name-than-any-recorded-one.example.org"} {
			out := withServerName(msg, off, n, host)
			var h tlshello.Hello
			if err := tlshello.Parse(out, &h); err != nil {
				t.Fatalf("%s → %s: %v", tc.name, host, err)
			}
			if string(h.ServerName) != host || !bytes.Equal(h.ALPN, orig.ALPN) || !bytes.Equal(h.Versions, orig.Versions) || h.ECH != orig.ECH {
				t.Errorf("%s → %s: got %+v, want the name changed in %+v", tc.name, host, h, orig)
			}
			if len(out)-len(msg) != len(host)-len(orig.ServerName) {
				t.Errorf("%s → %s: %d bytes, was %d", tc.name, host, len(out), len(msg))
			}
		}
	}
}
