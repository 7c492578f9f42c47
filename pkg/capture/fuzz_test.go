package capture

import (
	"bytes"
	"compress/gzip"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// FuzzReadCapture runs arbitrary bytes as a capture file through the whole
// engine: it must end with an error or a clean end, never a panic, and only
// report absolute URLs.
func FuzzReadCapture(f *testing.F) {
	tmp := f.TempDir()
	t := &testing.T{}
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:80")
	for i, fmt := range []format{fmtPcap, fmtPcapng, fmtGzip} {
		frames := [][]byte{
			frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 1, syn: true}),
			frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 2, ack: true, payload: get("/seed", "f.example")}),
		}
		p := filepath.Join(tmp, "seed"+string(rune('0'+i)))
		writeCapture(t, p, fmt, layers.LinkTypeEthernet, frames)
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte("\xd4\xc3\xb2\xa1junk"))
	zw.Close()
	f.Add(z.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "in")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, _, _ := replay(t, p)
		for _, u := range got {
			if !bytes.Contains([]byte(u), []byte(" http://")) {
				t.Fatalf("reported %q", u)
			}
		}
	})
}
