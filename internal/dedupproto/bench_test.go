package dedupproto_test

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/dedupproto"
)

// The whole protocol in one process on one redis-server: 2 networks of 2
// hosts, each host extracting b.N/4 URLs (half shared by all), pushed in
// batches of 500; the time until every URL is handed out.
func BenchmarkProtocol(b *testing.B) {
	s := newSystem(b, 2, 2, 10*time.Second)
	s.run()
	b.ResetTimer()
	per := max(b.N/4, 1)
	for i := 1; i <= 2; i++ {
		for j := 1; j <= 2; j++ {
			for lo := 0; lo < per; lo += 500 {
				var urls []string
				for k := lo; k < min(lo+500, per); k++ {
					if k%2 == 0 {
						urls = append(urls, fmt.Sprintf("http://shared.example/%d", k))
					} else {
						urls = append(urls, fmt.Sprintf("http://h%d-%d.example/%d", i, j, k))
					}
				}
				s.push(host(i, j), urls...)
			}
		}
	}
	s.quiet()
	b.StopTimer()
}

// A frame of 500 URLs of about 50 bytes, read and written, as every hop
// of the protocol does.
func BenchmarkFrame(b *testing.B) {
	f := &dedupproto.Frame{IP: netip.MustParseAddr("10.1.0.2"), Number: "n1/10.1.0.2/1", Flag: dedupproto.Answer}
	for i := range 500 {
		f.URLs = append(f.URLs, fmt.Sprintf("http://site%d.example.com/page/%d.html", i%50, i))
		f.Held = append(f.Held, i%7 == 0)
	}
	wire, err := f.Append(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := dedupproto.Decode(wire, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		b.ReportAllocs()
		buf := make([]byte, 0, len(wire))
		for b.Loop() {
			if buf, err = f.Append(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
