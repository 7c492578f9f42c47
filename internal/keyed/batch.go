package keyed

import "sync/atomic"

// LocateBatch hashes every URL and sets locs[i] to urls[i]'s Loc in g. It
// returns how many URLs could not be normalized (hashed raw). locs must be
// at least as long as urls.
func (h *Hasher) LocateBatch(g Geometry, urls [][]byte, locs []Loc) (invalid int) {
	locs = locs[:len(urls)]
	for i, u := range urls {
		sum, ok := h.Sum(u)
		if !ok {
			invalid++
		}
		locs[i] = g.Locate(sum)
	}
	return invalid
}

// DecideBatch decides every Loc in order, as if Decide (or Query when
// dryRun) were called on each: of repeats within the batch the first is New
// and the rest Dup (in a dry run they share the first one's answer). It
// sets res[i] and returns the batch's counts. res must be at least as long
// as locs. Batches of a few hundred or more hide memory latency best.
//
// It works on chunks of 512 URLs in input order, and in each reads before
// it writes, so that the cache misses of the chunk overlap. On amd64 it
// scans each b1 while the b1 32 URLs ahead is being fetched by a prefetch
// instruction (a hint that returns at once). Elsewhere a first pass loads
// one word of every b1 with nothing else waiting on it (no branch, no
// arithmetic: work that waits for a missing line fills the CPU's window
// and stops the next loads from issuing), then the scans run on lines in
// cache. b2 is touched only for the URLs whose b1 is full, and scanned
// after. A fingerprint found is a certain duplicate (slots never change
// once set). Only then, in input order, the rest are decided by
// compare-and-swap on lines now cached, exactly as Decide does.
func (t *Table) DecideBatch(locs []Loc, res []Result, dryRun bool) (c Counts) {
	res = res[:len(locs)]
	if !dryRun {
		t.mustWrite()
	}
	for len(locs) > 0 {
		n := min(len(locs), batchChunk)
		t.decideChunk(locs[:n], res[:n], dryRun, &c)
		locs, res = locs[n:], res[n:]
	}
	if !dryRun {
		t.newN.Add(c.New)
		t.dupN.Add(c.Dup)
		t.fullN.Add(c.Full)
	}
	return c
}

// batchChunk is how many URLs DecideBatch reads ahead: enough for the
// misses to overlap, few enough that the pages of the chunk are still in
// the TLB when it comes back to them (measured: 512 beats 4096 by a fifth).
const batchChunk = 512

func (t *Table) decideChunk(locs []Loc, res []Result, dryRun bool, c *Counts) {
	t.queryBatch(locs, res)
	if dryRun {
		for _, r := range res {
			c.add(r)
		}
		return
	}
	for i, l := range locs {
		if res[i] != Dup {
			res[i] = t.decide(l)
		}
		c.add(res[i])
	}
}

// queryBatch sets res[i] to Query(locs[i]) for every i, in the passes
// DecideBatch describes. len(res) == len(locs).
func (t *Table) queryBatch(locs []Loc, res []Result) {
	var touched uint32
	if !hasPrefetch {
		for _, l := range locs {
			touched ^= atomic.LoadUint32(&t.b1(l)[0])
		}
	}
	for _, l := range locs[:min(prefetchAhead, len(locs))] {
		prefetch(t.b1(l))
	}
	var full uint32 // b1 full: b2 touched, answer still to come
	for i, l := range locs {
		if j := i + prefetchAhead; j < len(locs) {
			prefetch(t.b1(locs[j]))
		}
		r, done := query(t.b1(l), toSlot(l.FP))
		if !done {
			touched ^= atomic.LoadUint32(&t.shards[l.Shard][l.B2&t.geo.mask][0])
			full++
		}
		res[i] = r
	}
	if full != 0 {
		for i, l := range locs {
			if res[i] == Full {
				res[i], _ = query(&t.shards[l.Shard][l.B2&t.geo.mask], toSlot(l.FP))
			}
		}
	}
	t.touched.Store(touched)
}

// prefetchAhead is how many URLs ahead of its scan queryBatch asks for b1
// (measured at 8, 16, 32, 64: 32 best, 16 and 64 close).
const prefetchAhead = 32

func (t *Table) b1(l Loc) *bucket { return &t.shards[l.Shard][l.B1&t.geo.mask] }

func (c *Counts) add(r Result) {
	switch r {
	case New:
		c.New++
	case Dup:
		c.Dup++
	default:
		c.Full++
	}
}
