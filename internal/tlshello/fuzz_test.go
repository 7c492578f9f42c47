package tlshello_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// FuzzParse: any bytes give a Hello whose slices lie inside the message,
// or an error; never a panic.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.hello")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(hello(sni("a.example"), ext(16, []byte{0, 3, 2, 'h', '2'}), ext(43, []byte{2, 3, 4}), ext(0xfe0d, []byte{0})))
	f.Fuzz(func(t *testing.T, msg []byte) {
		var h tlshello.Hello
		if err := tlshello.Parse(msg, &h); err != nil {
			if h.ServerName != nil || h.ALPN != nil || h.Versions != nil || h.ECH {
				t.Fatalf("error %v with a Hello set: %+v", err, h)
			}
			return
		}
		for _, s := range [][]byte{h.ServerName, h.ALPN, h.Versions} {
			if len(s) > 0 && !bytes.Contains(msg, s) {
				t.Fatalf("a slice %q not from the message", s)
			}
		}
		if len(h.Versions) < 2 || len(h.Versions)%2 != 0 {
			t.Fatalf("versions %x", h.Versions)
		}
		for l := h.ALPN; len(l) > 0; {
			_, rest, ok := tlshello.NextProtocol(l)
			if !ok {
				t.Fatalf("ALPN list %x does not walk", h.ALPN)
			}
			l = rest
		}
	})
}
