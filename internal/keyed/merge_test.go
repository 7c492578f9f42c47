package keyed

import (
	"context"
	"sync"
	"testing"
)

// decideAll decides locs on t in batches and returns the Locs it stored
// (New): the URLs whose repeats t answers dup.
func decideAll(t *Table, locs []Loc) (stored []Loc) {
	res := make([]Result, len(locs))
	t.DecideBatch(locs, res, false)
	for i, r := range res {
		if r == New {
			stored = append(stored, locs[i])
		}
	}
	return stored
}

// mergeTables re-inserts every shard of src into dst.
func mergeTables(tb testing.TB, dst *Table, src [][]byte) MergeCounts {
	tb.Helper()
	var c MergeCounts
	set := NewSet(dst, nil)
	for i, b := range src {
		n, err := MergeShard(context.Background(), dst.Geometry(), uint8(i), b, set)
		if err != nil {
			tb.Fatal(err)
		}
		c.Add(n)
	}
	return c
}

// invisible counts the Locs dst does not answer dup.
func invisible(dst *Table, locs []Loc) int {
	n := 0
	for _, l := range locs {
		if dst.Query(l) != Dup {
			n++
		}
	}
	return n
}

// TestMergeShard merges two tables built from overlapping URL sets into a
// third and compares it with one table that decided all the URLs: every
// URL either source stored is a duplicate after the merge (or, past
// capacity, counted not stored), and URLs of neither are as new as in the
// one table. The loads go from well below capacity to past it, where the
// sources have full buckets and the ambiguous re-insert must happen.
// Under -race the table and the URL counts are an eighth (sized): the
// same loads.
func TestMergeShard(t *testing.T) {
	sb := sized(4096) // 64 buckets a shard: 262,144 slots
	g := mustGeometry(t, int64(sb))
	for _, tc := range []struct {
		name                 string
		shared, ownA, ownB   int
		wantAmbiguous, roomy bool // roomy: one table deciding all stores all
	}{
		{"light", 20_000, 40_000, 40_000, false, true},
		{"full buckets", 100_000, 15_000, 5_000, true, true},
		{"past capacity", 60_000, 150_000, 150_000, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.shared, tc.ownA, tc.ownB = sized(tc.shared), sized(tc.ownA), sized(tc.ownB)
			shared := testLocs(g, "shared", 0, tc.shared)
			aLocs := append(append([]Loc(nil), shared...), testLocs(g, "a", 0, tc.ownA)...)
			bLocs := append(append([]Loc(nil), shared...), testLocs(g, "b", 0, tc.ownB)...)
			aShards, bShards := heapShards(sb), heapShards(sb)
			a, _ := NewTable(aShards, false)
			b, _ := NewTable(bShards, false)
			aStored, bStored := decideAll(a, aLocs), decideAll(b, bLocs)
			one := newHeapTable(t, sb)
			decideAll(one, append(append([]Loc(nil), aLocs...), bLocs...))
			if roomy := one.Counts().Full == 0; roomy != tc.roomy {
				t.Fatalf("one table deciding all did not store %d URLs; the case wants roomy %v", one.Counts().Full, tc.roomy)
			}

			dst := newHeapTable(t, sb)
			ca := mergeTables(t, dst, aShards)
			if ca.Total() != uint64(len(aStored)) || (ca.Present != 0 && tc.roomy) {
				t.Fatalf("merging a into an empty table: %+v; a stored %d", ca, len(aStored))
			}
			cb := mergeTables(t, dst, bShards)
			if cb.Total() != uint64(len(bStored)) {
				t.Fatalf("merging b: %+v; b stored %d", cb, len(bStored))
			}
			// A Loc of a (or b) that both sources stored counts as present
			// in the second merge; the shared URLs are such.
			if tc.roomy && cb.Present < uint64(tc.shared)*9/10 {
				t.Fatalf("merging b: %d present, %d URLs shared", cb.Present, tc.shared)
			}
			notStored := ca.NotStored + cb.NotStored
			lost := invisible(dst, aStored) + invisible(dst, bStored)
			if tc.roomy && (notStored != 0 || lost != 0) {
				t.Fatalf("room for all, yet %d not stored, %d stored URLs answered new", notStored, lost)
			}
			if uint64(lost) > notStored {
				t.Fatalf("%d URLs the sources stored are answered new after the merge; only %d counted not stored", lost, notStored)
			}
			amb := ca.Ambiguous + cb.Ambiguous
			if tc.wantAmbiguous != (amb > 0) {
				t.Fatalf("%d ambiguous fingerprints (want some: %v)", amb, tc.wantAmbiguous)
			}
			never := testLocs(g, "never", 0, 50_000)
			dupMerged, dupOne := len(never)-invisible(dst, never), len(never)-invisible(one, never)
			if dupMerged > dupOne+10 || dupMerged > len(never)/1000 {
				t.Fatalf("unseen URLs answered dup: %d after the merge, %d in one table", dupMerged, dupOne)
			}
			t.Logf("a %+v, b %+v; %d/%d stored URLs lost; unseen dup %d (one table %d)",
				ca, cb, lost, len(aStored)+len(bStored), dupMerged, dupOne)

			// Merging again changes nothing.
			again := mergeTables(t, dst, aShards)
			if again.Merged != 0 {
				t.Fatalf("merging a twice stored %d more", again.Merged)
			}
		})
	}
}

// A merge into a table that other goroutines decide on meanwhile: both the
// merged URLs and theirs are there afterwards, each stored once.
func TestMergeShardLive(t *testing.T) {
	const sb = 8192
	g := mustGeometry(t, sb)
	srcShards := heapShards(sb)
	src, _ := NewTable(srcShards, false)
	srcStored := decideAll(src, testLocs(g, "src", 0, 100_000))
	dst := newHeapTable(t, sb)
	live := testLocs(g, "live", 0, 100_000)
	var wg sync.WaitGroup
	news := make([]int, 4)
	for w := range news {
		wg.Go(func() {
			res := make([]Result, 500)
			for off := 0; off < len(live); off += len(res) {
				part := live[off:min(off+len(res), len(live))]
				dst.DecideBatch(part, res, false)
				for _, r := range res[:len(part)] {
					if r == New {
						news[w]++
					}
				}
			}
		})
	}
	c := mergeTables(t, dst, srcShards)
	wg.Wait()
	if c.NotStored != 0 || c.Merged+c.Present != uint64(len(srcStored)) {
		t.Fatalf("merge: %+v of %d", c, len(srcStored))
	}
	if n := news[0] + news[1] + news[2] + news[3]; n != len(live) {
		t.Fatalf("%d live URLs answered new by 4 deciders, want each once: %d", n, len(live))
	}
	if n := invisible(dst, srcStored) + invisible(dst, live); n != 0 {
		t.Fatalf("%d URLs answered new after the merge", n)
	}
}

// MergeShard into Redis writes the same bytes as into a local table.
func TestMergeShardRedis(t *testing.T) {
	const sb = 4096
	g := mustGeometry(t, sb)
	client := redisServer(t)()
	ctx := context.Background()
	srcShards := heapShards(sb)
	src, _ := NewTable(srcShards, false)
	decideAll(src, testLocs(g, "r", 0, 200_000)) // full buckets: ambiguous ones too
	rt := NewRedis(client, "urldedupd-merge", g)
	want := newHeapTable(t, sb)
	set := NewSet(want, nil)
	for i := range 8 {
		cr, err := MergeShard(ctx, g, uint8(i), srcShards[i], rt)
		if err != nil {
			t.Fatal(err)
		}
		ct, _ := MergeShard(ctx, g, uint8(i), srcShards[i], set)
		if cr != ct || cr.Merged == 0 {
			t.Fatalf("shard %d: redis %+v, table %+v", i, cr, ct)
		}
		got, err := client.Get(ctx, rt.Key(uint8(i))).Bytes()
		if err != nil {
			t.Fatal(err)
		}
		wantBytes := shardBytes(want, i)
		if string(got) != string(wantBytes[:len(got)]) {
			t.Fatalf("shard %d: redis bytes differ from the table's", i)
		}
	}
}

// shardBytes returns shard i of t as stored.
func shardBytes(t *Table, i int) []byte {
	out := make([]byte, 0, t.geo.ShardBytes)
	for _, b := range t.shards[i] {
		for _, v := range b {
			v = toSlot(v)
			out = append(out, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
		}
	}
	return out
}

// FuzzMergeShard merges arbitrary bytes as a shard: no panic, and every
// fingerprint visible in them (a Forgotten slot is none) is visible in
// the destination afterwards, in each order the source allows, unless
// counted not stored.
func FuzzMergeShard(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0}, uint8(0))
	full := make([]byte, 4*BucketBytes)
	for i := range full {
		full[i] = byte(i*7 + 1)
	}
	f.Add(full, uint8(1))
	f.Add(append(full[:BucketBytes:BucketBytes], 0, 0, 0, 0, 9, 9, 9, 9), uint8(2))
	f.Fuzz(func(t *testing.T, src []byte, size uint8) {
		sb := int64(MinTableShardBytes) << (size % 3)
		g := mustGeometry(t, sb)
		dst := newHeapTable(t, int(sb))
		n, err := MergeShard(context.Background(), g, 7, src, NewSet(dst, nil))
		if int64(len(src)) > sb {
			if err == nil {
				t.Fatal("a source longer than a shard was merged")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		m := merger{g: g, src: src}
		lost, total := 0, uint64(0)
		for b := uint32(0); int(b)*BucketBytes < len(src); b++ {
			for j := 0; j < SlotsPerBucket && m.slot(b, j) != 0; j++ {
				fp := m.slot(b, j)
				if fp == Forgotten {
					continue // a forgotten URL is not merged
				}
				a := g.alt(b, fp)
				total++
				if dst.Query(Loc{Shard: 7, B1: b, B2: a, FP: fp}) != Dup ||
					(m.full(a) && dst.Query(Loc{Shard: 7, B1: a, B2: b, FP: fp}) != Dup) {
					lost++
				}
			}
		}
		if n.Total() != total || uint64(lost) > n.NotStored {
			t.Fatalf("counts %+v for %d fingerprints; %d not found after", n, total, lost)
		}
	})
}

// halfInserter inserts the first half of each batch (never parting a
// fingerprint's two orders) into its Set, remembers what it inserted, and
// then fails: a merge interrupted mid-shard.
type halfInserter struct {
	set   *Set
	done  map[locKey]Result
	twins int // fingerprints inserted in both orders
}

func (h *halfInserter) Insert(ctx context.Context, locs []Loc, res []Result) error {
	n := len(locs) / 2
	if n > 0 && n < len(locs) && locs[n].FP == locs[n-1].FP && locs[n].B1 == locs[n-1].B2 {
		n++
	}
	if err := h.set.Insert(ctx, locs[:n], res[:n]); err != nil {
		return err
	}
	for i, l := range locs[:n] {
		if i > 0 && l.FP == locs[i-1].FP && l.B1 == locs[i-1].B2 {
			h.twins++
		}
		if r, ok := h.done[keyOf(l)]; !ok || r != Full {
			h.done[keyOf(l)] = res[i]
		}
	}
	return context.Canceled
}

// A merge stopped mid-shard leaves every fingerprint it got to visible in
// its own bucket order, although the rest of the shard (which would fill
// the source's full buckets in the destination too) never came: what the
// insert in both orders is for.
func TestMergeShardInterrupted(t *testing.T) {
	const sb = 4096
	g := mustGeometry(t, sb)
	srcShards := heapShards(sb)
	src, _ := NewTable(srcShards, false)
	stored := decideAll(src, testLocs(g, "i", 0, 190_000)) // one bucket in 7 full
	dst := newHeapTable(t, sb)
	h := &halfInserter{set: NewSet(dst, nil), done: map[locKey]Result{}}
	for i := range srcShards {
		if _, err := MergeShard(context.Background(), g, uint8(i), srcShards[i], h); err == nil {
			t.Fatal("the interrupted merge reported no error")
		}
	}
	checked, lost := 0, 0
	for _, l := range stored {
		r, ok := h.done[keyOf(l)]
		if !ok || r == Full {
			continue
		}
		checked++
		if dst.Query(l) != Dup {
			lost++
		}
	}
	if checked < len(stored)/4 || h.twins == 0 || lost != 0 {
		t.Fatalf("%d of %d URLs merged before the stop are answered new (%d inserted in both orders)", lost, checked, h.twins)
	}
}
