package state

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/urldedupd/urldedupd/internal/counter"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// Cached is a remote backend with a local first pass, a decorator of the
// backend: a memory-mapped state on this host that remembers every
// signature the remote backend has reported stored (Open's
// RemoteOptions.Cache, in front of Redis).
//
// It stays exactly once because a layout it can mirror only ever sets
// bits (layout.MergeOr or MergeReinsert, never a tree that splits): a
// signature is stored in the cache only after the remote backend has it,
// so one found locally is stored globally, a certain duplicate that needs
// no round trip. Every other signature is decided by the remote backend,
// in order, as without the cache. Several processes may share one cache
// directory, and a Cached is safe for concurrent use.
type Cached struct {
	Local  layout.Decider // a layout opened over a state directory of the same format (layout.Local)
	Remote layout.Decider // the backend it is in front of (a state in Redis)

	scratch sync.Pool // *cacheScratch
	local   atomic.Uint64
	remote  atomic.Uint64
}

// cacheScratch is one call's working memory, reused across calls.
type cacheScratch struct {
	idx   []int                 // batch index of each signature sent
	sub   []signature.Signature // the signatures sent to Redis
	seen  []bool                // Redis' answers
	known []signature.Signature // the signatures Redis now holds, to store in the cache
	was   []bool                // the cache's answers for them (unused)
}

// CacheStats count where decisions were made.
type CacheStats struct {
	Local  uint64 // duplicates answered by the cache
	Remote uint64 // signatures asked of Redis (a repeat within a batch costs no command)
}

// CacheStatsCounters describes CacheStats' counters (internal/counter).
var CacheStatsCounters = counter.Table[CacheStats]{
	{Name: "local", Help: "Duplicates answered by the local cache", Field: func(s *CacheStats) *uint64 { return &s.Local }},
	{Name: "remote", Help: "Signatures asked of Redis", Field: func(s *CacheStats) *uint64 { return &s.Remote }},
}

// Stats returns the counts so far.
func (c *Cached) Stats() CacheStats {
	return CacheStats{Local: c.local.Load(), Remote: c.remote.Load()}
}

// Decide answers what the cache knows and sends the rest to Redis, which
// answers a repeat within the batch as its first occurrence does.
func (c *Cached) Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error {
	// Through Decide and Check: a cache shard truncated under us is an
	// error (shardfile.ErrFault), not SIGBUS.
	if err := c.Local.Decide(ctx, sigs, seen, true); err != nil {
		return err
	}
	sc, _ := c.scratch.Get().(*cacheScratch)
	if sc == nil {
		sc = &cacheScratch{}
	}
	defer c.scratch.Put(sc)
	sc.idx, sc.sub = sc.idx[:0], sc.sub[:0]
	for i, s := range sigs {
		if !seen[i] {
			sc.idx = append(sc.idx, i)
			sc.sub = append(sc.sub, s)
		}
	}
	c.local.Add(uint64(len(sigs) - len(sc.sub)))
	if len(sc.sub) == 0 {
		return nil
	}
	c.remote.Add(uint64(len(sc.sub)))
	if cap(sc.seen) < len(sc.sub) {
		sc.seen = make([]bool, len(sc.sub))
	}
	rs := sc.seen[:len(sc.sub)]
	if err := c.Remote.Decide(ctx, sc.sub, rs, dryRun); err != nil {
		return err
	}
	// Redis now holds every signature sent (unless a dry run found it
	// absent): so does the cache, in one batch.
	sc.known = sc.known[:0]
	for k, i := range sc.idx {
		seen[i] = rs[k]
		if !dryRun || rs[k] {
			sc.known = append(sc.known, sc.sub[k])
		}
	}
	if len(sc.known) == 0 {
		return nil
	}
	if cap(sc.was) < len(sc.known) {
		sc.was = make([]bool, len(sc.known))
	}
	return c.Local.Decide(ctx, sc.known, sc.was[:len(sc.known)], false)
}
