package redisstate

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/pkg/bloomlayout"
	"github.com/urldedupd/urldedupd/pkg/format"
)

// maxRounds bounds the rounds of one batch: a tree of 256 leaves is at
// most 8 deep (c ≥ 2), every round decides a URL or sends it one level
// down, and the rest are rounds for commands that provably did not run,
// sent again within the batch's timeout.
const maxRounds = 64

//go:embed tree.lua
var treeLua string

// treeScript decides URLs at one live leaf: see tree.lua.
var treeScript = redis.NewScript(treeLua)

// Answers of treeScript, per URL.
const (
	leafHeld   = 0 // all its bits were set: a duplicate
	leafStored = 1 // stored: new
	leafDown   = 2 // not held by a split leaf: decided in its child
)

// decideTree decides sc's pending signatures on a DSBF whose leaves are
// keys, in rounds, each one pipeline per node. A leaf not known to have
// split decides its URLs by one atomic script (tree.lua) that reads the
// leaf's split flag and count, tests and sets each URL's bits in order,
// counts those it stores and sets the flag after the URL that reaches the
// leaf's bound, exactly as a state directory's leaf does under its batch
// lock; so the bound holds whatever the number of writers, and a URL
// arriving after the split goes on to its child. URLs at a leaf known to
// have split (the flag is never cleared) are read only (BITFIELD_RO): a
// URL whose bits are all set is a duplicate, any other goes on to its
// child. A dry run reads every leaf, with its flag (GETRANGE) in the same
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
	wait := 20 * time.Millisecond
	for round := 0; len(sc.pending) > 0; round++ {
		if round == maxRounds {
			return fmt.Errorf("%w: %d URLs not decided in %d rounds", ErrUnavailable, len(sc.pending), round)
		}
		for s := range sc.byLeaf {
			sc.byLeaf[s] = sc.byLeaf[s][:0]
		}
		for _, ki := range sc.pending {
			sc.byLeaf[sc.slot[ki]] = append(sc.byLeaf[sc.slot[ki]], ki)
		}
		ps := r.pipes()
		var calls []leafCall
		clear(sc.arena) // the last round's commands are done: let their values go
		sc.arena = sc.arena[:0]
		next := sc.next[:0]
		var retry error
		for s, ks := range sc.byLeaf {
			if len(ks) == 0 {
				continue
			}
			np, err := ps.of(ctx, s)
			if err != nil { // no master known for the slot: nothing sent
				next, retry = append(next, ks...), err
				continue
			}
			calls = append(calls, r.leafCall(ctx, np.pipe, sc, s, dryRun))
		}
		ps.exec(ctx, 0, r.timeout)
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
		if redis.HasErrorPrefix(retry, "NOSCRIPT") {
			if err := treeScript.Load(ctx, r.c).Err(); err != nil {
				return fmt.Errorf("%w: load script: %v", ErrUnavailable, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %d URLs not decided within %v: %v", ErrUnavailable, len(sc.pending), r.timeout, retry)
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
	return nil
}

// leafCall is one leaf's command of a round.
type leafCall struct {
	leaf  int
	dry   bool
	write *redis.Cmd         // treeScript on a live leaf
	read  *redis.IntSliceCmd // BITFIELD_RO: the bits of the leaf's URLs
	head  *redis.StringCmd   // a dry run's read of the split flag
}

// Offsets of a DSBF leaf's header fields, in bits, most significant first
// as BITFIELD counts them: the split flag is byte 7, the count the low 63
// bits of bytes 8–15 (big-endian, as the state directory has them).
// tree.lua has them too.
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

// appendBits appends the offsets of every bit of the URLs ks, each
// preceded by "GET", "u1" when get is set.
func (r *Redis) appendBits(args []any, sc *scratch, ks []int, get bool) []any {
	for _, ki := range ks {
		sc.pos = r.tree.Positions(sc.pos[:0], uint64(sc.sub[ki]))
		for _, p := range sc.pos {
			if get {
				args = append(args, "GET", "u1", redisOffset(p))
			} else {
				args = append(args, redisOffset(p))
			}
		}
	}
	return args
}

// leafCall queues leaf s's command for this round.
func (r *Redis) leafCall(ctx context.Context, pipe redis.Pipeliner, sc *scratch, s int, dryRun bool) leafCall {
	ks := sc.byLeaf[s]
	c := leafCall{leaf: s, dry: dryRun}
	split := r.split[s].Load()
	start := len(sc.arena)
	if !dryRun && !split {
		limit, can := r.tree.Limit(s)
		if !can {
			limit = 0
		}
		args := append(sc.arena, "EVALSHA", treeScript.Hash(), 1, r.keys[s], limit, r.tree.K())
		args = r.appendBits(args, sc, ks, false)
		sc.arena = args
		c.write = redis.NewCmd(ctx, args[start:len(args):len(args)]...)
		_ = pipe.Process(ctx, c.write)
		return c
	}
	args := r.appendBits(append(sc.arena, "BITFIELD_RO", r.keys[s]), sc, ks, true)
	sc.arena = args
	c.read = redis.NewIntSliceCmd(ctx, args[start:len(args):len(args)]...)
	_ = pipe.Process(ctx, c.read)
	if dryRun && !split {
		c.head = pipe.GetRange(ctx, r.keys[s], 0, 7)
	}
	return c
}

// leafAnswers records the answers of one leaf's command, appending to
// next the URLs left for the next round (those sent on to a child). A
// command that provably did not run leaves its URLs for the next round,
// and is returned as retry.
func (r *Redis) leafAnswers(sc *scratch, c leafCall, next []int, retry error) ([]int, error, error) {
	t := r.tree
	k := t.K()
	s := c.leaf
	ks := sc.byLeaf[s]
	leafErr := func(e error) error {
		return fmt.Errorf("%w: leaf %s: %v (the batch may have been partly applied)", ErrUnavailable, format.ShardName(s), e)
	}
	if c.write != nil {
		if e := c.write.Err(); e != nil {
			if !notRun(e) {
				return next, retry, leafErr(e)
			}
			return append(next, ks...), e, nil
		}
		vals, e := c.write.Int64Slice()
		if e != nil {
			return next, retry, leafErr(e)
		}
		if len(vals) != 2+len(ks) {
			return next, retry, leafErr(fmt.Errorf("%d answers for %d URLs", len(vals)-2, len(ks)))
		}
		r.learnCount(s, uint64(max(vals[0], 0)))
		if vals[1] != 0 {
			r.split[s].Store(true)
		}
		for j, ki := range ks {
			switch vals[2+j] {
			case leafHeld:
				sc.ans[ki] = 1
			case leafStored:
				sc.ans[ki] = 0
			case leafDown:
				sc.slot[ki] = t.Child(s, uint64(sc.sub[ki]))
				next = append(next, ki)
			default:
				return next, retry, leafErr(fmt.Errorf("answer %d", vals[2+j]))
			}
		}
		return next, retry, nil
	}
	if e := c.read.Err(); e != nil {
		if !notRun(e) {
			return next, retry, leafErr(e)
		}
		return append(next, ks...), e, nil
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
	if len(bits) != k*len(ks) {
		return next, retry, leafErr(fmt.Errorf("%d bits read for %d URLs", len(bits), len(ks)))
	}
	for j, ki := range ks {
		switch {
		case !slices.Contains(bits[j*k:(j+1)*k], 0):
			sc.ans[ki] = 1
		case split:
			sc.slot[ki] = t.Child(s, uint64(sc.sub[ki]))
			next = append(next, ki)
		default: // a dry run at a live leaf
			sc.ans[ki] = 0
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
	if err := treeScript.Load(ctx, r.c).Err(); err != nil { // so the first batch need not learn of NOSCRIPT
		return fmt.Errorf("redisstate: %w: load script: %v", ErrUnavailable, err)
	}
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
