package keyed

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/urldedupd/urldedupd/internal/signature"
)

func TestNewGeometry(t *testing.T) {
	for _, tc := range []struct {
		bytes   int64
		buckets uint32
		err     error
	}{
		{MinTableShardBytes, 2, nil},
		{MinShardBytes, 1 << 15, nil},
		{MaxShardBytes, 1 << 24, nil},
		{64, 0, ErrShardSize},
		{MaxShardBytes * 2, 0, ErrShardSize},
		{3 << 20, 0, ErrShardSize},
		{0, 0, ErrShardSize},
		{-MinShardBytes, 0, ErrShardSize},
	} {
		g, err := NewGeometry(tc.bytes)
		if !errors.Is(err, tc.err) {
			t.Errorf("NewGeometry(%d): %v, want %v", tc.bytes, err, tc.err)
			continue
		}
		if err == nil && g.Buckets() != tc.buckets {
			t.Errorf("NewGeometry(%d): %d buckets, want %d", tc.bytes, g.Buckets(), tc.buckets)
		}
	}
}

func TestNewTableRefuses(t *testing.T) {
	good := heapShards(MinTableShardBytes)
	uneven := heapShards(MinTableShardBytes)
	uneven[7] = make([]byte, 2*MinTableShardBytes)
	misaligned := heapShards(MinTableShardBytes)
	misaligned[3] = make([]byte, MinTableShardBytes+1)[1:]
	for _, tc := range []struct {
		name   string
		shards [][]byte
		err    error
	}{
		{"ok", good, nil},
		{"255 shards", good[:255], ErrShardCount},
		{"odd size", heapShards(96), ErrShardSize},
		{"uneven", uneven, ErrShardSize},
		{"misaligned", misaligned, ErrShardSize},
	} {
		if _, err := NewTable(tc.shards, false); !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
}

func TestLocate(t *testing.T) {
	for _, sb := range []int64{MinTableShardBytes, 4096, MinShardBytes, MaxShardBytes} {
		g := mustGeometry(t, sb)
		for i, h := range []uint64{0, 1, 1 << 32, math.MaxUint64, 0xdeadbeef00000000, 0x0123456789abcdef} {
			l := g.Locate(h)
			switch {
			case l.FP == 0:
				t.Errorf("%d/%d: fingerprint 0", sb, i)
			case l.B1 >= g.Buckets() || l.B2 >= g.Buckets():
				t.Errorf("%d/%d: buckets %d, %d of %d", sb, i, l.B1, l.B2, g.Buckets())
			case l.B1 == l.B2:
				t.Errorf("%d/%d: b1 == b2 == %d", sb, i, l.B1)
			case g.alt(l.B2, l.FP) != l.B1:
				t.Errorf("%d/%d: alt is not an involution", sb, i)
			case l.Shard != uint8(h>>56):
				t.Errorf("%d/%d: shard %02x", sb, i, l.Shard)
			}
		}
	}
}

func TestHasherNormalizes(t *testing.T) {
	h := NewHasher(testKey, signature.Safe)
	a, ok1 := h.Sum([]byte("HTTP://Example.COM:80/a/./b#frag"))
	b, ok2 := h.Sum([]byte("http://example.com/a/b"))
	if !ok1 || !ok2 || a != b {
		t.Errorf("equivalent spellings: %x (%v) != %x (%v)", a, ok1, b, ok2)
	}
	if _, ok := h.Sum([]byte("http://exa%zzmple.com/")); ok {
		t.Error("a bad escape was normalized")
	}
	other := NewHasher(Key{1}, signature.Safe)
	if c, _ := other.Sum([]byte("http://example.com/a/b")); c == a {
		t.Error("two keys give one hash")
	}
	if _, err := ParseKey(make([]byte, 15)); !errors.Is(err, ErrKey) {
		t.Errorf("ParseKey(15 bytes): %v", err)
	}
	k1, err1 := NewKey()
	k2, err2 := NewKey()
	if err1 != nil || err2 != nil || k1 == k2 {
		t.Errorf("NewKey: %v %v, equal %v", err1, err2, k1 == k2)
	}
}

// TestDecideSequences runs sequences of decisions on one bucket pair and
// checks every answer and where each fingerprint went.
func TestDecideSequences(t *testing.T) {
	g := mustGeometry(t, 4096) // 64 buckets
	loc := func(fp uint32) Loc { return Loc{Shard: 9, B1: 5, B2: g.alt(5, fp), FP: fp} }
	same := func(fp uint32) Loc { l := loc(fp); l.B2 = 40; return l } // every fp shares b2 = 40
	type step struct {
		l    Loc
		dry  bool
		want Result
	}
	var fill []step // 16 fps fill b1, 16 more fill b2, then the table is full for this pair
	for i := uint32(1); i <= 32; i++ {
		fill = append(fill, step{same(i), false, New})
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"new then dup", []step{{loc(7), false, New}, {loc(7), false, Dup}, {loc(8), false, New}, {loc(7), false, Dup}}},
		{"dry run stores nothing", []step{{loc(7), true, New}, {loc(7), true, New}, {loc(7), false, New}, {loc(7), true, Dup}}},
		{"b2 holds the 17th", append(fill[:17:17], step{same(17), false, Dup}, step{same(1), false, Dup})},
		{"full", append(fill[:32:32], step{same(33), false, Full}, step{same(33), true, Full}, step{same(33), false, Full},
			step{same(32), false, Dup}, step{same(16), false, Dup})},
	} {
		tab := newHeapTable(t, 4096)
		for i, s := range tc.steps {
			var got Result
			if s.dry {
				got = tab.Query(s.l)
			} else {
				got = tab.Decide(s.l)
			}
			if got != s.want {
				t.Errorf("%s: step %d (fp %d, dry %v): %v, want %v", tc.name, i, s.l.FP, s.dry, got, s.want)
			}
		}
	}
	// where the fingerprints are: b1 in slot order, then b2, little-endian
	shards := heapShards(4096)
	tab, _ := NewTable(shards, false)
	for _, s := range fill {
		tab.Decide(s.l)
	}
	for i := range 32 {
		off := 5*BucketBytes + i*4
		if i >= 16 {
			off = 40*BucketBytes + (i-16)*4
		}
		if v := binary.LittleEndian.Uint32(shards[9][off:]); v != uint32(i+1) {
			t.Errorf("slot %d holds %d, want %d", i, v, i+1)
		}
	}
	if c := tab.Counts(); c != (Counts{New: 32}) {
		t.Errorf("counts %+v", c)
	}
}

func TestDecideBatchIsSequential(t *testing.T) {
	g := mustGeometry(t, 256) // 4 buckets a shard: repeats, b2 use and Full all happen
	locs := testLocs(g, "a", 0, 30000)
	locs = append(locs, locs[:5000]...)
	locs = append(locs, testLocs(g, "b", 0, 3000)...)
	seq, bat := newHeapTable(t, 256), newHeapTable(t, 256)
	res := make([]Result, 1000)
	var want, got Counts
	for off := 0; off < len(locs); off += len(res) {
		part := locs[off:min(off+len(res), len(locs))]
		q := make([]Result, len(part))
		dry := bat.DecideBatch(part, q, true)
		c := bat.DecideBatch(part, res, false)
		got.New, got.Dup, got.Full = got.New+c.New, got.Dup+c.Dup, got.Full+c.Full
		for i, l := range part {
			w := seq.Decide(l)
			if res[i] != w {
				t.Fatalf("URL %d: batch %v, one by one %v", off+i, res[i], w)
			}
			if q[i] == Dup && res[i] != Dup || dry.New+dry.Dup+dry.Full != uint64(len(part)) {
				t.Fatalf("URL %d: dry run %v, then %v", off+i, q[i], res[i])
			}
		}
	}
	want = seq.Counts()
	if got != want || bat.Counts() != want || want.Full == 0 || want.Dup < 5000 {
		t.Errorf("batch counts %+v, table %+v, one by one %+v", got, bat.Counts(), want)
	}
}

// TestBatchAllocatesNothing: the hot paths, URLs to answers, allocate
// nothing per call (batches longer than DecideBatch's chunk included).
func TestBatchAllocatesNothing(t *testing.T) {
	tab := newHeapTable(t, MinTableShardBytes*64)
	g := tab.Geometry()
	h := NewHasher(testKey, signature.Safe)
	urls := make([][]byte, 3*batchChunk/2)
	for i := range urls {
		urls[i] = testURL(nil, "z", i)
	}
	locs, res := make([]Loc, len(urls)), make([]Result, len(urls))
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"LocateBatch", func() { h.LocateBatch(g, urls, locs) }},
		{"DecideBatch", func() { tab.DecideBatch(locs, res, false) }},
		{"DecideBatch dry", func() { tab.DecideBatch(locs, res, true) }},
		{"Decide", func() { tab.Decide(locs[0]) }},
		{"Query", func() { tab.Query(locs[1]) }},
	} {
		if n := testing.AllocsPerRun(100, tc.f); n != 0 {
			t.Errorf("%s: %v allocations a call", tc.name, n)
		}
	}
	if c := tab.Counts(); c.New == 0 || c.Dup == 0 {
		t.Errorf("counts %+v: the calls did not decide", c)
	}
}

// TestOverflow fills a table of two buckets a shard until every URL is
// answered Full: nothing distinct is ever a duplicate, and what is not
// stored is counted.
func TestOverflow(t *testing.T) {
	g := mustGeometry(t, MinTableShardBytes)
	tab := newHeapTable(t, MinTableShardBytes)
	locs := testLocs(g, "o", 0, 40000) // 40000 URLs, 8192 slots
	seen := map[locKey]bool{}
	var full, stored int
	for i, l := range locs {
		k := keyOf(l)
		r := tab.Decide(l)
		switch {
		case seen[k] && r != Dup:
			t.Fatalf("URL %d stored before: %v", i, r)
		case !seen[k] && r == Dup:
			t.Fatalf("URL %d is new, answered dup", i) // 8192 slots: a 32-bit collision here is ~1e-2 over the run; the fixed key has none
		case r == Full:
			full++
			if q := tab.Query(l); q != Full {
				t.Fatalf("URL %d not stored, then queried %v", i, q)
			}
		case r == New:
			stored++
			seen[k] = true
		}
	}
	f := tab.Fill()
	if f.Hist[SlotsPerBucket] != f.Buckets || f.Occupied() != uint64(stored) || stored != 8192 {
		t.Errorf("after overflow: %d of %d buckets full, %d occupied, %d stored", f.Hist[SlotsPerBucket], f.Buckets, f.Occupied(), stored)
	}
	if c := tab.Counts(); c.Full != uint64(full) || c.New != uint64(stored) || full == 0 {
		t.Errorf("counts %+v, %d full, %d stored", c, full, stored)
	}
	if o := f.Occupancy(); o.NotStored() != 1 || o.FalseDup() <= 0 {
		t.Errorf("full table: not stored %g, false dup %g", o.NotStored(), o.FalseDup())
	}
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		n   uint64
		p   float64
		err error
	}{
		{0, 1e-6, ErrPlan},
		{1e6, 0, ErrPlan},
		{1e6, 1, ErrPlan},
		{1e6, math.NaN(), ErrPlan},
		{1e6, -1, ErrPlan},
		{1e12, 1e-6, ErrCannotMeet}, // 1e12 URLs do not fit 2^36 slots
		{1e9, 1e-12, ErrCannotMeet}, // 32-bit fingerprints: needs ~100× the largest state
		{1e6, 1e-15, ErrCannotMeet}, // below what 2^32 fingerprints compare
		{10e6, 1e-9, nil},
		{100e6, 1e-6, nil},
		{1e9, 1e-6, nil},
		{1, 0.5, nil},
	} {
		g, err := Plan(tc.n, tc.p)
		if !errors.Is(err, tc.err) {
			t.Errorf("Plan(%d, %g): %v, want %v", tc.n, tc.p, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		ok := func(g Geometry) bool {
			o := Predict(float64(tc.n) / float64(uint64(g.Buckets())*Shards))
			return o.FalseDup() <= tc.p && o.NotStored() <= NegligibleNotStored
		}
		if !ok(g) || g.ShardBytes < MinShardBytes {
			t.Errorf("Plan(%d, %g) = %d bytes a shard, which does not meet it", tc.n, tc.p, g.ShardBytes)
		}
		if g.ShardBytes > MinShardBytes && ok(mustGeometry(t, g.ShardBytes/2)) {
			t.Errorf("Plan(%d, %g) = %d bytes a shard, half would do", tc.n, tc.p, g.ShardBytes)
		}
		t.Logf("Plan(%d, %g) = %d MiB a shard, %d MiB in all", tc.n, tc.p, g.ShardBytes>>20, g.StateBytes()>>20)
	}
}
