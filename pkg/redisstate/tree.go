package redisstate

import (
	"context"
	_ "embed"
	"fmt"
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
// keys: each round sends every leaf its URLs in one script run, all leaves
// in one pipeline (Redis Cluster splits it by node); a URL its leaf
// answers "split, not here" goes to its child in the next round. A leaf's
// decisions, its count and its split are one atomic script, and a split
// leaf never changes again, so reading it in a later round is safe.
func (r *Redis) decideTree(ctx context.Context, sc *scratch, dryRun bool) error {
	t := r.tree
	if cap(sc.slot) < len(sc.sub) {
		sc.slot = make([]int, len(sc.sub))
	}
	sc.slot = sc.slot[:len(sc.sub)]
	for _, ki := range sc.pending {
		sc.slot[ki] = t.First(uint64(sc.sub[ki]))
	}
	dry := 0
	if dryRun {
		dry = 1
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
		type call struct {
			leaf int
			cmd  *redis.Cmd
		}
		var calls []call
		for s, ks := range sc.byLeaf {
			if len(ks) == 0 {
				continue
			}
			limit, can := t.Limit(s)
			split := 0
			if can {
				split = 1
			}
			args := make([]any, 0, 4+t.K()*len(ks))
			args = append(args, dry, t.K(), limit, split)
			for _, ki := range ks {
				sc.pos = t.Positions(sc.pos[:0], uint64(sc.sub[ki]))
				for _, p := range sc.pos {
					args = append(args, p)
				}
			}
			calls = append(calls, call{s, treeScript.EvalSha(ctx, pipe, []string{r.keys[s]}, args...)})
		}
		_, _ = pipe.Exec(ctx) // every command carries its own error
		next := sc.next[:0]
		var retry error
		for _, c := range calls {
			ks := sc.byLeaf[c.leaf]
			if e := c.cmd.Err(); e != nil {
				if !notRun(e) {
					return fmt.Errorf("%w: leaf %s: %v (the batch may have been partly applied)", ErrUnavailable, format.ShardName(c.leaf), e)
				}
				next, retry = append(next, ks...), e
				continue
			}
			vals, e := c.cmd.Int64Slice()
			if e != nil || len(vals) != len(ks) {
				return fmt.Errorf("%w: leaf %s: %d answers for %d URLs: %v (the batch may have been partly applied)",
					ErrUnavailable, format.ShardName(c.leaf), len(vals), len(ks), e)
			}
			for j, ki := range ks {
				switch vals[j] {
				case 0, 1:
					sc.ans[ki] = uint8(vals[j])
				case 2:
					sc.slot[ki] = t.Child(c.leaf, uint64(sc.sub[ki]))
					next = append(next, ki)
				default:
					return fmt.Errorf("%w: leaf %s: answer %d out of range", ErrUnavailable, format.ShardName(c.leaf), vals[j])
				}
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
