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

//go:embed tree.lua
var treeLua string

// treeScript decides a batch of URLs on one DSBF leaf (tree.lua).
var treeScript = redis.NewScript(treeLua)

// maxRounds bounds the descents of one batch: a tree of 256 leaves is at
// most 8 deep (c ≥ 2), and a script that provably did not run is sent
// again within the batch's timeout.
const maxRounds = 64

// decideTree decides sc's pending signatures on a DSBF whose leaves are
// keys, in rounds, each one pipeline (Redis Cluster splits it by node):
//
//   - a leaf not known to have split gets its URLs in one run of the
//     script (tree.lua), which tests and sets them, counts them and splits
//     the leaf at its bound, atomically; URLs it could not decide because
//     the leaf has split are left for the next round, and the leaf is
//     remembered as split (a split is for ever);
//   - a leaf known to have split is only read (BITFIELD_RO): a URL whose
//     bits are all set is a duplicate, the others go on to their child in
//     the next round. A split leaf never changes again, so no script is
//     needed and no answer can be stale.
//
// A dry run reads every leaf, with its header in the same pipeline.
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
			return fmt.Errorf("%w: %d URLs not decided in %d rounds", ErrUnavailable, len(sc.pending), maxRounds)
		}
		for s := range sc.byLeaf {
			sc.byLeaf[s] = sc.byLeaf[s][:0]
		}
		for _, ki := range sc.pending {
			sc.byLeaf[sc.slot[ki]] = append(sc.byLeaf[sc.slot[ki]], ki)
		}
		pipe := r.c.Pipeline()
		var calls []leafCall
		for s, ks := range sc.byLeaf {
			if len(ks) > 0 {
				calls = append(calls, r.leafCall(ctx, pipe, sc, s, ks, dryRun))
			}
		}
		_, _ = pipe.Exec(ctx) // every command carries its own error
		next := sc.next[:0]
		var retry error
		for _, c := range calls {
			var err error
			next, retry, err = r.leafAnswers(sc, c, next, retry)
			if err != nil {
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
				return fmt.Errorf("%w: %v", ErrUnavailable, err)
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

// leafCall is one leaf's command of a round: the script (run), or a read
// of its bits (read) and, in a dry run of a leaf not known to have split,
// of its header (head).
type leafCall struct {
	leaf int
	run  *redis.Cmd
	read *redis.IntSliceCmd
	head *redis.StringCmd
}

// redisOffset is Redis's bit offset (most significant bit first within a
// byte) of filter bit p of a leaf, which is bit 512 + p of the key,
// least significant first.
func redisOffset(p uint64) uint64 {
	b := p + format.LeafHeaderBytes*8
	return b&^7 | (7 - b&7)
}

// leafCall queues leaf s's command for the URLs ks.
func (r *Redis) leafCall(ctx context.Context, pipe redis.Pipeliner, sc *scratch, s int, ks []int, dryRun bool) leafCall {
	t := r.tree
	c := leafCall{leaf: s}
	if dryRun || r.split[s].Load() {
		args := make([]any, 0, 2+3*t.K()*len(ks))
		args = append(args, "BITFIELD_RO", r.keys[s])
		for _, ki := range ks {
			sc.pos = t.Positions(sc.pos[:0], uint64(sc.sub[ki]))
			for _, p := range sc.pos {
				args = append(args, "GET", "u1", redisOffset(p))
			}
		}
		c.read = redis.NewIntSliceCmd(ctx, args...)
		_ = pipe.Process(ctx, c.read)
		if !r.split[s].Load() {
			c.head = pipe.GetRange(ctx, r.keys[s], 0, 7)
		}
		return c
	}
	limit, can := t.Limit(s)
	split := 0
	if can {
		split = 1
	}
	args := make([]any, 0, 3+t.K()*len(ks))
	args = append(args, t.K(), limit, split)
	for _, ki := range ks {
		sc.pos = t.Positions(sc.pos[:0], uint64(sc.sub[ki]))
		for _, p := range sc.pos {
			args = append(args, redisOffset(p))
		}
	}
	c.run = treeScript.EvalSha(ctx, pipe, []string{r.keys[s]}, args...)
	return c
}

// leafAnswers records the answers of one leaf's command, appending to
// next the URLs left for the next round. A command that provably did not
// run leaves its URLs for the next round too, and is returned as retry.
func (r *Redis) leafAnswers(sc *scratch, c leafCall, next []int, retry error) ([]int, error, error) {
	t := r.tree
	ks := sc.byLeaf[c.leaf]
	leafErr := func(e error) error {
		return fmt.Errorf("%w: leaf %s: %v (the batch may have been partly applied)", ErrUnavailable, format.ShardName(c.leaf), e)
	}
	var cmd redis.Cmder = c.read
	if c.run != nil {
		cmd = c.run
	}
	if e := cmd.Err(); e != nil {
		if !notRun(e) {
			return next, retry, leafErr(e)
		}
		return append(next, ks...), e, nil
	}
	if c.run != nil {
		vals, e := c.run.Int64Slice()
		if e != nil || len(vals) != len(ks) {
			return next, retry, leafErr(fmt.Errorf("%d answers for %d URLs: %v", len(vals), len(ks), e))
		}
		for j, ki := range ks {
			switch vals[j] {
			case 0, 1:
				sc.ans[ki] = uint8(vals[j])
			case 2: // split before this URL: query it there next round
				r.split[c.leaf].Store(true)
				next = append(next, ki)
			default:
				return next, retry, leafErr(fmt.Errorf("answer %d out of range", vals[j]))
			}
		}
		return next, retry, nil
	}
	split := r.split[c.leaf].Load()
	if c.head != nil {
		h, e := c.head.Bytes()
		if e != nil && !errors.Is(e, redis.Nil) {
			return next, retry, leafErr(e)
		}
		split = slices.ContainsFunc(h, func(b byte) bool { return b != 0 })
	}
	bits := c.read.Val()
	k := t.K()
	if len(bits) != k*len(ks) {
		return next, retry, leafErr(fmt.Errorf("%d bits read for %d URLs", len(bits), len(ks)))
	}
	for j, ki := range ks {
		sc.ans[ki] = 1
		for _, b := range bits[j*k : (j+1)*k] {
			if b == 0 {
				sc.ans[ki] = 0
				break
			}
		}
		if sc.ans[ki] == 0 && split {
			sc.slot[ki] = t.Child(c.leaf, uint64(sc.sub[ki]))
			next = append(next, ki)
		}
	}
	return next, retry, nil
}

// loadTree readies a DSBF state: its tree, and its script on every node.
func (r *Redis) loadTree(ctx context.Context) error {
	if r.replicas > 0 {
		return fmt.Errorf("redisstate: %w: layout dsbf does not wait for replicas (--replicas) in this build", format.ErrLayout)
	}
	r.tree = bloomlayout.NewTree(r.meta)
	var err error
	if r.cluster != nil {
		err = r.cluster.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			return treeScript.Load(ctx, c).Err()
		})
	} else {
		err = treeScript.Load(ctx, r.c).Err()
	}
	if err != nil {
		return fmt.Errorf("redisstate: %w: %v", ErrUnavailable, err)
	}
	return nil
}

// TreeReport measures a DSBF state: every leaf's header (GETRANGE) and
// bits set (BITCOUNT past the header), in one pipeline.
func (r *Redis) TreeReport(ctx context.Context) (bloomlayout.Report, error) {
	rep := bloomlayout.Report{Shards: make([]uint64, format.Shards)}
	if r.tree == nil {
		return rep, fmt.Errorf("redisstate: %w: TreeReport on layout %s", format.ErrLayout, r.meta.Spec.Layout)
	}
	pipe := r.c.Pipeline()
	heads := make([]*redis.StringCmd, format.Shards)
	counts := make([]*redis.IntCmd, format.Shards)
	for s := range heads {
		heads[s] = pipe.GetRange(ctx, r.keys[s], 0, 15)
		counts[s] = pipe.BitCount(ctx, r.keys[s], &redis.BitCount{Start: format.LeafHeaderBytes, End: -1})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return rep, fmt.Errorf("redisstate: %w: %v", ErrUnavailable, err)
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
	r.tree.Report(&rep, leaves)
	return rep, nil
}
