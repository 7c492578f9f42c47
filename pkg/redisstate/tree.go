package redisstate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/pkg/bloomlayout"
	"github.com/urldedupd/urldedupd/pkg/format"
)

// maxRounds bounds the rounds of one batch, beyond one a URL: a tree of
// 256 leaves is at most 8 deep (c ≥ 2), a leaf near its bound takes a few
// more, and every round decides a URL, sends one to a child or counts,
// but for commands that provably did not run, sent again within the
// batch's timeout.
const maxRounds = 64

// decideTree decides sc's pending signatures on a DSBF whose leaves are
// keys, in rounds, each one pipeline (Redis Cluster splits it by node).
// No script: one BITFIELD command per leaf and round does everything the
// leaf needs, atomically, in order:
//
//   - INCRBY of the leaf's count by the URLs this process stored in it in
//     earlier rounds (its answer is the count, which every process
//     learns this way);
//   - SET of the split flag (byte 7), when the count known here has
//     reached the leaf's bound: any process may set it, once set it stays,
//     so a process that dies before setting it delays the split, never
//     prevents it;
//   - GET of the split flag, then SET of each URL's bits, which returns
//     the old bits: with the flag clear, a URL whose bits were all set is
//     a duplicate and any other is new, decided by this one atomic
//     command. With the flag set (the leaf split before this command, and
//     this process had not yet seen it), a URL whose bits were all set is
//     a duplicate, and any other goes on to its child: it was not in the
//     leaf, and is decided there. Its bits, set in the split leaf, only
//     make that leaf answer "present" for it, which its decision in the
//     child will bear out (once, as always).
//
// A leaf is sent at most as many URLs as its bound has room for, so that
// it splits where a state directory's would; the others are read in the
// same pipeline, and those it holds already are duplicates (bits are never
// cleared), the rest wait for the next round. URLs at a leaf known to have
// split are read only (BITFIELD_RO) and go on to their child when absent;
// a dry run reads every leaf, with its flag (GETRANGE) in the same
// pipeline.
func (r *Redis) decideTree(ctx context.Context, sc *scratch, dryRun bool) error {
	t := r.tree
	if cap(sc.slot) < len(sc.sub) {
		sc.slot = make([]int, len(sc.sub))
	}
	sc.slot = sc.slot[:len(sc.sub)]
	for _, ki := range sc.pending {
		sc.slot[ki] = t.First(uint64(sc.sub[ki]))
	}
	clear(sc.incr[:])
	wait := 20 * time.Millisecond
	for round := 0; ; round++ {
		counting := slices.ContainsFunc(sc.incr[:], func(n uint64) bool { return n > 0 })
		if len(sc.pending) == 0 && !counting {
			return nil
		}
		if round == maxRounds+len(sc.sub) {
			return fmt.Errorf("%w: %d URLs not decided in %d rounds", ErrUnavailable, len(sc.pending), round)
		}
		for s := range sc.byLeaf {
			sc.byLeaf[s] = sc.byLeaf[s][:0]
		}
		for _, ki := range sc.pending {
			sc.byLeaf[sc.slot[ki]] = append(sc.byLeaf[sc.slot[ki]], ki)
		}
		pipe := r.c.Pipeline()
		var calls []leafCall
		clear(sc.arena) // the last round's commands are done: let their values go
		sc.arena = sc.arena[:0]
		for s, ks := range sc.byLeaf {
			if len(ks) > 0 || sc.incr[s] > 0 {
				calls = append(calls, r.leafCall(ctx, pipe, sc, s, dryRun))
			}
		}
		_, _ = pipe.Exec(ctx) // every command carries its own error
		next := sc.next[:0]
		var retry error
		for _, c := range calls {
			var err error
			if next, retry, err = r.leafAnswers(sc, c, next, retry); err != nil {
				return err
			}
		}
		sc.pending, sc.next = next, sc.pending
		if retry == nil {
			continue
		}
		if r.cluster != nil {
			r.cluster.ReloadState(ctx)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %d URLs not decided within %v: %v", ErrUnavailable, len(sc.pending), r.timeout, retry)
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// leafCall is one leaf's commands of a round.
type leafCall struct {
	leaf  int
	dry   bool
	write *redis.IntSliceCmd // BITFIELD: [INCRBY count] [SET flag] [GET flag, SET bits of sent URLs]
	incr  uint64             // the INCRBY's increment (0: none)
	flag  bool               // write sets the split flag
	sent  int                // URLs (the first of the leaf's) whose bits write sets
	read  *redis.IntSliceCmd // BITFIELD_RO: the bits of the leaf's URLs from sent on
	head  *redis.StringCmd   // a dry run's read of the split flag
}

// Offsets of a DSBF leaf's header fields, in bits, most significant first
// as BITFIELD counts them: the split flag is byte 7, the count the low 63
// bits of bytes 8–15 (big-endian, as the state directory has them).
const (
	flagOffset  = 56
	countOffset = 65
)

// redisOffset is Redis's bit offset (most significant bit first within a
// byte) of filter bit p of a leaf, which is bit 512 + p of the key,
// least significant first.
func redisOffset(p uint64) uint64 {
	b := p + format.LeafHeaderBytes*8
	return b&^7 | (7 - b&7)
}

// appendBits appends op ("SET" or "GET") of every bit of the URLs ks.
func (r *Redis) appendBits(args []any, sc *scratch, ks []int, op string) []any {
	for _, ki := range ks {
		sc.pos = r.tree.Positions(sc.pos[:0], uint64(sc.sub[ki]))
		for _, p := range sc.pos {
			if op == "SET" {
				args = append(args, "SET", "u1", redisOffset(p), 1)
			} else {
				args = append(args, "GET", "u1", redisOffset(p))
			}
		}
	}
	return args
}

// leafCall queues leaf s's commands for this round.
func (r *Redis) leafCall(ctx context.Context, pipe redis.Pipeliner, sc *scratch, s int, dryRun bool) leafCall {
	t := r.tree
	ks := sc.byLeaf[s]
	c := leafCall{leaf: s, dry: dryRun}
	split := r.split[s].Load()
	if !dryRun {
		start := len(sc.arena)
		args := append(sc.arena, "BITFIELD", r.keys[s])
		if c.incr = sc.incr[s]; c.incr > 0 {
			sc.incr[s] = 0
			args = append(args, "INCRBY", "u63", countOffset, c.incr)
		}
		limit, can := t.Limit(s)
		known := r.count[s].Load()
		if !split && can && known >= limit {
			args = append(args, "SET", "u8", flagOffset, 1)
			c.flag, split = true, true
		}
		if !split && len(ks) > 0 {
			c.sent = len(ks)
			if can {
				c.sent = min(c.sent, int(max(limit-known, 1)))
			}
			args = append(args, "GET", "u8", flagOffset)
			args = r.appendBits(args, sc, ks[:c.sent], "SET")
		}
		sc.arena = args
		if len(args) > start+2 {
			c.write = redis.NewIntSliceCmd(ctx, args[start:len(args):len(args)]...)
			_ = pipe.Process(ctx, c.write)
		}
	}
	if len(ks) > c.sent {
		start := len(sc.arena)
		args := r.appendBits(append(sc.arena, "BITFIELD_RO", r.keys[s]), sc, ks[c.sent:], "GET")
		sc.arena = args
		c.read = redis.NewIntSliceCmd(ctx, args[start:len(args):len(args)]...)
		_ = pipe.Process(ctx, c.read)
		if dryRun && !split {
			c.head = pipe.GetRange(ctx, r.keys[s], 0, 7)
		}
	}
	return c
}

// leafAnswers records the answers of one leaf's commands, appending to
// next the URLs left for the next round (those not sent, and those sent
// on to a child). Commands that provably did not run leave their URLs
// (and their count) for the next round, and are returned as retry.
func (r *Redis) leafAnswers(sc *scratch, c leafCall, next []int, retry error) ([]int, error, error) {
	t := r.tree
	k := t.K()
	s := c.leaf
	ks := sc.byLeaf[s]
	leafErr := func(e error) error {
		return fmt.Errorf("%w: leaf %s: %v (the batch may have been partly applied)", ErrUnavailable, format.ShardName(s), e)
	}
	allSet := func(bits []int64) bool { return !slices.Contains(bits, 0) }
	unsent := ks[c.sent:]
	if c.write != nil {
		if e := c.write.Err(); e != nil {
			if !notRun(e) {
				return next, retry, leafErr(e)
			}
			sc.incr[s] += c.incr
			return append(next, ks...), e, nil
		}
		vals := c.write.Val()
		want := len(vals)
		if c.incr > 0 {
			want--
			r.learnCount(s, uint64(max(vals[0], 0)))
			vals = vals[1:]
		}
		if c.flag {
			want--
			r.split[s].Store(true)
			vals = vals[1:]
		}
		if c.sent > 0 {
			if want != 1+c.sent*k {
				return next, retry, leafErr(fmt.Errorf("%d answers for %d URLs", want, c.sent))
			}
			splitBefore := t.Split(s, vals[0] != 0)
			if splitBefore {
				r.split[s].Store(true)
			}
			var stored uint64
			for j, ki := range ks[:c.sent] {
				switch {
				case allSet(vals[1+j*k : 1+(j+1)*k]):
					sc.ans[ki] = 1
				case splitBefore: // not in the leaf: decided in its child
					sc.slot[ki] = t.Child(s, uint64(sc.sub[ki]))
					next = append(next, ki)
				default:
					sc.ans[ki] = 0
					stored++
				}
			}
			sc.incr[s] += stored
			r.count[s].Add(stored)
		}
	}
	if c.read == nil {
		return append(next, unsent...), retry, nil // waiting for room, or for the split flag
	}
	if e := c.read.Err(); e != nil {
		if !notRun(e) {
			return next, retry, leafErr(e)
		}
		return append(next, unsent...), e, nil
	}
	split := r.split[s].Load()
	if c.head != nil {
		h, e := c.head.Bytes()
		if e != nil && !errors.Is(e, redis.Nil) {
			return next, retry, leafErr(e)
		}
		split = t.Split(s, slices.ContainsFunc(h, func(b byte) bool { return b != 0 }))
	}
	bits := c.read.Val()
	if len(bits) != k*len(unsent) {
		return next, retry, leafErr(fmt.Errorf("%d bits read for %d URLs", len(bits), len(unsent)))
	}
	for j, ki := range unsent {
		switch {
		case allSet(bits[j*k : (j+1)*k]):
			sc.ans[ki] = 1
		case split:
			sc.slot[ki] = t.Child(s, uint64(sc.sub[ki]))
			next = append(next, ki)
		case c.dry:
			sc.ans[ki] = 0
		default: // a live leaf without room for it this round
			next = append(next, ki)
		}
	}
	return next, retry, nil
}

// learnCount records a leaf's count as Redis answered it: the most of
// what this process knew and what Redis says.
func (r *Redis) learnCount(s int, n uint64) {
	for {
		old := r.count[s].Load()
		if n <= old || r.count[s].CompareAndSwap(old, n) {
			return
		}
	}
}

// loadTree readies a DSBF state: its tree, and every leaf's split flag and
// count as they are now.
func (r *Redis) loadTree(ctx context.Context) error {
	if r.replicas > 0 {
		return fmt.Errorf("redisstate: %w: layout dsbf does not wait for replicas (--redis-replicas) in this build", format.ErrLayout)
	}
	r.tree = bloomlayout.NewTree(r.meta)
	leaves, err := r.leaves(ctx)
	if err != nil {
		return err
	}
	for s, l := range leaves {
		r.split[s].Store(r.tree.Split(s, l.Split))
		r.count[s].Store(l.URLs)
	}
	return nil
}

// leaves reads every leaf's header (GETRANGE) and bits set (BITCOUNT past
// the header), in one pipeline.
func (r *Redis) leaves(ctx context.Context) ([]bloomlayout.Leaf, error) {
	pipe := r.c.Pipeline()
	heads := make([]*redis.StringCmd, format.Shards)
	counts := make([]*redis.IntCmd, format.Shards)
	for s := range heads {
		heads[s] = pipe.GetRange(ctx, r.keys[s], 0, 15)
		counts[s] = pipe.BitCount(ctx, r.keys[s], &redis.BitCount{Start: format.LeafHeaderBytes, End: -1})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("redisstate: %w: %v", ErrUnavailable, err)
	}
	leaves := make([]bloomlayout.Leaf, format.Shards)
	for s := range leaves {
		h := []byte(heads[s].Val())
		for i := 0; i < len(h) && i < 8; i++ {
			leaves[s].Split = leaves[s].Split || h[i] != 0
		}
		for i := 8; i < len(h) && i < 16; i++ {
			leaves[s].URLs = leaves[s].URLs<<8 | uint64(h[i])
		}
		leaves[s].BitsSet = uint64(counts[s].Val())
	}
	return leaves, nil
}

// TreeReport measures a DSBF state from every leaf's header and bits set.
func (r *Redis) TreeReport(ctx context.Context) (bloomlayout.Report, error) {
	rep := bloomlayout.Report{Shards: make([]uint64, format.Shards)}
	if r.tree == nil {
		return rep, fmt.Errorf("redisstate: %w: TreeReport on layout %s", format.ErrLayout, r.meta.Spec.Layout)
	}
	leaves, err := r.leaves(ctx)
	if err != nil {
		return rep, err
	}
	r.tree.Report(&rep, leaves)
	return rep, nil
}
