package redisstate

import (
	"context"

	"github.com/urldedupd/urldedupd/pkg/bitcheck"
	"github.com/urldedupd/urldedupd/pkg/signature"
)

// Cached is Redis with a local first pass: a memory-mapped state on this
// host that remembers every bit Redis has reported set.
//
// It stays exactly once because bits are only ever set: a bit is set in
// the cache only after Redis has it set, so a bit set locally is set
// globally, and a signature found in the cache is a certain duplicate that
// needs no round trip. Every other signature is decided by Redis, in order,
// as without the cache. Several processes may share one cache directory.
type Cached struct {
	Local  *bitcheck.Set
	Remote *Redis

	idx   []int                       // batch index of each signature sent
	sub   []signature.Signature       // the signatures sent to Redis
	seen  []bool                      // Redis' answers
	first map[signature.Signature]int // signature → its index in sub
	rep   []int                       // batch indexes of in-batch repeats
	Stats CacheStats
}

// CacheStats count where decisions were made.
type CacheStats struct {
	Local  uint64 // duplicates answered by the cache
	Remote uint64 // signatures sent to Redis
}

// Decide answers what the cache knows and sends the rest to Redis, each
// signature once per batch: a repeat within the batch is a duplicate of its
// first occurrence (in a dry run, it shares the first one's answer).
func (c *Cached) Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error {
	c.Local.TestBatch(sigs, seen)
	if c.first == nil {
		c.first = make(map[signature.Signature]int, 1024)
	}
	clear(c.first)
	c.idx, c.sub, c.rep = c.idx[:0], c.sub[:0], c.rep[:0]
	for i, s := range sigs {
		if seen[i] {
			continue
		}
		if _, ok := c.first[s]; ok {
			c.rep = append(c.rep, i)
			continue
		}
		c.first[s] = len(c.sub)
		c.idx = append(c.idx, i)
		c.sub = append(c.sub, s)
	}
	c.Stats.Local += uint64(len(sigs) - len(c.sub))
	if len(c.sub) == 0 {
		return nil
	}
	c.Stats.Remote += uint64(len(c.sub))
	if cap(c.seen) < len(c.sub) {
		c.seen = make([]bool, len(c.sub))
	}
	rs := c.seen[:len(c.sub)]
	if err := c.Remote.Decide(ctx, c.sub, rs, dryRun); err != nil {
		return err
	}
	for k, i := range c.idx {
		seen[i] = rs[k]
		// Redis now has the bit set (unless a dry run found it clear).
		if !dryRun || rs[k] {
			c.Local.TestAndSet(c.sub[k])
		}
	}
	for _, i := range c.rep {
		seen[i] = !dryRun || rs[c.first[sigs[i]]]
	}
	return nil
}
