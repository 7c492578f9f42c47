package resp_test

import (
	"fmt"
	"testing"

	"github.com/urldedupd/urldedupd/internal/resp"
)

// loop returns its data again and again, as a client pipelining the same
// burst forever.
type loop struct {
	data []byte
	off  int
}

func (l *loop) Read(p []byte) (int, error) {
	n := copy(p, l.data[l.off:])
	l.off = (l.off + n) % len(l.data)
	return n, nil
}

// burst is n pipelined BF.ADD commands of distinct URLs.
func burst(n int) []byte {
	var b []byte
	for i := range n {
		u := fmt.Sprintf("http://example.com/some/path/%06d", i)
		b = fmt.Appendf(b, "*3\r\n$6\r\nBF.ADD\r\n$5\r\ncrawl\r\n$%d\r\n%s\r\n", len(u), u)
	}
	return b
}

// Once warm, reading commands allocates nothing, whether they come one a
// read or in pipelined bursts that straddle reads.
func TestReaderAllocs(t *testing.T) {
	for _, n := range []int{1, 64, 1000} {
		r := resp.NewReader(&loop{data: burst(n)}, nil, &budget{limit: 1 << 30})
		var w resp.Writer
		read := func() {
			cmds, err := r.ReadCommands()
			if err != nil || len(cmds) == 0 {
				t.Fatalf("%d commands, %v", len(cmds), err)
			}
			w.Reset(64 << 10)
			w.Array(len(cmds))
			for range cmds {
				w.Int(1)
			}
		}
		for range 100 {
			read()
		}
		if a := testing.AllocsPerRun(1000, read); a != 0 {
			t.Errorf("bursts of %d: %v allocations a read", n, a)
		}
	}
}

func BenchmarkReader(b *testing.B) {
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("pipeline=%d", n), func(b *testing.B) {
			data := burst(n)
			r := resp.NewReader(&loop{data: data}, nil, nil)
			b.SetBytes(int64(len(data) / n))
			b.ReportAllocs()
			for got := 0; got < b.N; {
				cmds, err := r.ReadCommands()
				if err != nil {
					b.Fatal(err)
				}
				got += len(cmds)
			}
		})
	}
}
