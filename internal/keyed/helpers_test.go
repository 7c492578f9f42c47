package keyed

import (
	"strconv"
	"testing"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// testKey is a fixed key, so failures reproduce.
var testKey = Key{0: 1, 3: 7, 8: 0x5a, 15: 0xc3}

// heapShards returns 256 zeroed shards of n bytes each in one allocation.
func heapShards(n int) [][]byte {
	all := make([]byte, n*Shards)
	s := make([][]byte, Shards)
	for i := range s {
		s[i] = all[i*n : (i+1)*n : (i+1)*n]
	}
	return s
}

func newHeapTable(tb testing.TB, shardBytes int) *Table {
	tb.Helper()
	t, err := NewTable(heapShards(shardBytes), false)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// testURL appends the i-th synthetic URL of a family (55 bytes for
// family "a" and i of 7 digits).
func testURL(dst []byte, family string, i int) []byte {
	dst = append(dst, "http://www.example.com/"...)
	dst = append(dst, family...)
	dst = append(dst, "/catalog/product/itm?id="...)
	return strconv.AppendInt(dst, int64(i), 10)
}

// testLocs returns the Locs of URLs [from, to) of family in g.
func testLocs(g Geometry, family string, from, to int) []Loc {
	h := NewHasher(testKey, signature.Safe)
	locs := make([]Loc, 0, to-from)
	var buf []byte
	for i := from; i < to; i++ {
		buf = testURL(buf[:0], family, i)
		sum, _ := h.Sum(buf)
		locs = append(locs, g.Locate(sum))
	}
	return locs
}

// locKey identifies a URL as the table can: shard, bucket pair, fingerprint.
type locKey struct {
	shard  uint8
	lo, hi uint32
	fp     uint32
}

func keyOf(l Loc) locKey {
	lo, hi := min(l.B1, l.B2), max(l.B1, l.B2)
	return locKey{l.Shard, lo, hi, l.FP}
}

func mustGeometry(tb testing.TB, shardBytes int64) Geometry {
	tb.Helper()
	g, err := NewGeometry(shardBytes)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}
