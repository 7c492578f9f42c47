package keyed

import (
	"encoding/binary"
	"testing"
)

// FuzzDecide fills a small table with hostile bytes (the state file is not
// trusted) and decides Locs taken from the input: nothing may panic, a URL
// answered New is then found, and a batch answers as one by one.
func FuzzDecide(f *testing.F) {
	f.Add([]byte{}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 0, 1, 0, 0, 0}, []byte("http://example.com/ some url bytes"))
	f.Fuzz(func(t *testing.T, state, in []byte) {
		const sb = 256 // 4 buckets a shard
		a, b := heapShards(sb), heapShards(sb)
		if len(state) > 0 {
			for i := range a {
				for j := range a[i] {
					a[i][j] = state[(i*sb+j)%len(state)]
				}
				copy(b[i], a[i])
			}
		}
		ta, _ := NewTable(a, false)
		tb, _ := NewTable(b, false)
		var locs []Loc
		for len(in) >= 13 {
			l := Loc{Shard: in[0], B1: binary.LittleEndian.Uint32(in[1:]), B2: binary.LittleEndian.Uint32(in[5:]), FP: binary.LittleEndian.Uint32(in[9:])}
			if l.FP == 0 {
				l.FP = 1
			}
			locs = append(locs, l)
			in = in[13:]
		}
		res := make([]Result, len(locs))
		tb.DecideBatch(locs, res, false)
		for i, l := range locs {
			r := ta.Decide(l)
			if r != res[i] {
				t.Fatalf("Loc %d %+v: one by one %v, batch %v", i, l, r, res[i])
			}
			if r > Full {
				t.Fatalf("result %d", r)
			}
			if r == New && ta.Query(l) != Dup {
				t.Fatalf("Loc %+v stored, then not found", l)
			}
		}
		_ = ta.Fill().Occupancy().FalseDup()
	})
}
