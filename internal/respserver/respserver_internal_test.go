package respserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/frontend"
	"github.com/urldedupd/urldedupd/internal/resp"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

// Items of the default key are signed as the state signs URLs; under
// another key, as the key, a NUL and the normalized item, with the same
// hash (and key, for the keyed layouts).
func TestSign(t *testing.T) {
	for _, name := range []string{"bitmap", "keyed"} {
		st := statetest.Memory(t, name)
		s := newSigner(st, DefaultKey, DefaultMaxItem)
		url := st.Signer()
		var raw *signature.Signer
		if k := st.Key(); k != nil {
			raw = signature.NewKeyedSigner(*k, signature.None)
		} else {
			raw = signature.NewSigner(st.Meta().Spec.Algorithm, signature.None)
		}
		for _, tt := range []struct {
			key, item, signed string // signed: what the namespaced signature hashes
		}{
			{"crawl", "HTTP://Example.COM:80/a/../b#f", "crawl\x00http://example.com/b"},
			{"crawl", "3F2A0C9E8B7D6A5F4E3D2C1B0A9F8E7D6C5B4A39", "crawl\x00http://3f2a0c9e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39/"},
			{"other", "two words", "other\x00two words"},
			{"", "http://example.com/", "\x00http://example.com/"},
		} {
			want, _ := url.Sign([]byte(tt.item))
			if got := s.sign([]byte(DefaultKey), []byte(tt.item)); got != want {
				t.Errorf("%s: default key, %q: %x, want the URL's %x", name, tt.item, got, want)
			}
			want, _ = raw.Sign([]byte(tt.signed))
			got := s.sign([]byte(tt.key), []byte(tt.item))
			if got != want {
				t.Errorf("%s: key %q, %q: %x, want the hash of %q, %x", name, tt.key, tt.item, got, tt.signed, want)
			}
			if def, _ := url.Sign([]byte(tt.item)); got == def {
				t.Errorf("%s: key %q, %q: signed as under the default key", name, tt.key, tt.item)
			}
		}
	}
}

func TestCheckItem(t *testing.T) {
	s := &signer{maxItem: 10}
	for _, tt := range []struct {
		i    int
		item string
		want string
	}{
		{0, "http://a/", ""},
		{0, "", "ERR the item is empty"},
		{2, " \t", "ERR item 2 is empty"},
		{1, "http://abcdef/", "ERR item 1 is 14 bytes, over the limit of 10"},
		{0, "a\x00b", "ERR the item holds a NUL byte"},
	} {
		if got := s.checkItem(tt.i, []byte(tt.item)); got != tt.want {
			t.Errorf("checkItem(%d, %q) = %q, want %q", tt.i, tt.item, got, tt.want)
		}
	}
	if checkKey([]byte("a\x00")) == "" || checkKey([]byte("crawl:1")) != "" {
		t.Error("checkKey")
	}
}

// loop returns its data again and again.
type loop struct {
	data []byte
	off  int
}

func (l *loop) Read(p []byte) (int, error) {
	n := copy(p, l.data[l.off:])
	l.off = (l.off + n) % len(l.data)
	return n, nil
}

// Once warm, answering a pipelined burst (reading it, signing and
// deciding its URLs, writing the replies, reporting each command to the
// metrics) allocates nothing.
func TestBurstAllocs(t *testing.T) {
	st := statetest.Memory(t, "bitmap")
	m := frontend.NewMetrics("resp", "RESP", "command", "status", nil, nil)
	f := New(st, &Options{Observe: m.Observe}, nil)
	var burst []byte
	for i := range 64 {
		u := fmt.Sprintf("http://alloc.example/%d", i)
		burst = fmt.Appendf(burst, "*3\r\n$6\r\nBF.ADD\r\n$5\r\ncrawl\r\n$%d\r\n%s\r\n", len(u), u)
		burst = fmt.Appendf(burst, "*3\r\n$9\r\nBF.EXISTS\r\n$4\r\nurls\r\n$%d\r\n%s\r\n*1\r\n$4\r\nPING\r\n", len(u), u)
	}
	burst = append(burst, "*4\r\n$7\r\nBF.MADD\r\n$4\r\nurls\r\n$9\r\nhttp://a/\r\n$9\r\nhttp://b/\r\n"...)
	cn := f.newConn(nil)
	cn.r = resp.NewReader(&loop{data: burst}, nil, f.budget)
	once := func() {
		cmds, err := cn.r.ReadCommands()
		if err != nil {
			t.Fatal(err)
		}
		cn.answer(context.Background(), cmds)
		cn.observe(time.Millisecond)
		cn.w.Reset(keepReply)
	}
	for range 50 {
		once()
	}
	if a := testing.AllocsPerRun(200, once); a != 0 {
		t.Fatalf("%v allocations a burst", a)
	}
}

// BenchmarkBurst answers pipelined bursts of BF.ADD (one command a URL)
// and BF.MADD of 100 URLs against an in-memory bitmap, the same URLs
// again and again (all but the first found seen): per command, and per
// URL, without the network.
func BenchmarkBurst(b *testing.B) {
	for _, tc := range []struct {
		name       string
		cmds, urls int // commands in a burst, URLs a command
	}{{"BF.ADD/pipeline=1", 1, 1}, {"BF.ADD/pipeline=64", 64, 1}, {"BF.MADD/100", 1, 100}} {
		b.Run(tc.name, func(b *testing.B) {
			st := statetest.Memory(b, "bitmap")
			f := New(st, nil, nil)
			var burst []byte
			for i := range tc.cmds {
				if tc.urls == 1 {
					burst = append(burst, "*3\r\n$6\r\nBF.ADD\r\n$4\r\nurls\r\n"...)
				} else {
					burst = fmt.Appendf(burst, "*%d\r\n$7\r\nBF.MADD\r\n$4\r\nurls\r\n", 2+tc.urls)
				}
				for j := range tc.urls {
					u := fmt.Sprintf("http://bench.example/%d/%d", i, j)
					burst = fmt.Appendf(burst, "$%d\r\n%s\r\n", len(u), u)
				}
			}
			cn := f.newConn(nil)
			cn.r = resp.NewReader(&loop{data: burst}, nil, nil)
			b.ReportAllocs()
			for done := 0; done < b.N; {
				cmds, err := cn.r.ReadCommands()
				if err != nil {
					b.Fatal(err)
				}
				cn.answer(context.Background(), cmds)
				cn.w.Reset(keepReply)
				done += len(cmds)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tc.urls), "ns/URL")
		})
	}
}
