package keyed

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
// as locs. Batches of a few hundred to a few thousand hide memory latency
// best.
//
// A first pass of plain loads answers every fingerprint already present
// (slots never change once set, so a fingerprint seen is a certain
// duplicate) and lets the cache misses of the whole batch overlap; the
// second pass, in input order, runs the compare-and-swaps on lines now in
// cache.
func (t *Table) DecideBatch(locs []Loc, res []Result, dryRun bool) (c Counts) {
	res = res[:len(locs)]
	for i, l := range locs {
		res[i] = t.Query(l)
	}
	if dryRun {
		for _, r := range res {
			c.add(r)
		}
		return c
	}
	t.mustWrite()
	for i, l := range locs {
		if res[i] != Dup {
			res[i] = t.decide(l)
		}
		c.add(res[i])
	}
	t.newN.Add(c.New)
	t.dupN.Add(c.Dup)
	t.fullN.Add(c.Full)
	return c
}

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
