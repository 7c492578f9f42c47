package redisstate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// scratch is one Decide call's working memory, reused across calls.
type scratch struct {
	sub     []signature.Signature       // distinct signatures of the batch
	ans     []uint8                     // their answers: a bit, or a keyed.Result
	met     []bool                      // first occurrence met, when answering
	first   map[signature.Signature]int // signature → index in sub
	of      []int                       // batch index → index in sub
	pending []int                       // indexes in sub not yet decided
	next    []int                       // pending after an attempt
	slot    []int                       // DSBF: the leaf each index in sub is at
	byLeaf  [signature.Shards][]int     // DSBF: pending indexes by leaf
	pos     []uint64                    // DSBF: one URL's positions
	arena   []any                       // DSBF: the arguments of a round's commands
	incr    [signature.Shards]uint64    // DSBF: URLs stored per leaf, not yet counted there
	grant   [signature.Shards]uint64    // DSBF: room leased per leaf, not yet used
	refund  [signature.Shards]uint64    // DSBF: leases to give back per leaf
	full    [signature.Shards]bool      // DSBF: leaves whose room is all leased: set their flag
	short   [signature.Shards]bool      // DSBF: leaves whose last lease came back short
}

// Decide tests and sets (or with dryRun only tests) every signature's bit,
// in one pipeline per attempt. seen[i] reports whether sigs[i] was set; a
// repeat within the batch is a duplicate of its first occurrence (in a dry
// run it shares the first one's answer), so each signature is sent once.
//
// Commands that provably did not run (no connection could be made, or the
// server refused them unrun: LOADING, CLUSTERDOWN, TRYAGAIN, MASTERDOWN,
// READONLY, MOVED) are sent again, with backoff, until Timeout. A command
// that may have run and has no answer fails the batch at once: sending it
// again could turn a lost "new" into "dup".
func (r *Redis) Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	sc := r.prepare(sigs)
	defer r.scratch.Put(sc)
	decide := r.decide
	if r.tree != nil {
		decide = r.decideTree
	}
	if err := decide(ctx, sc, dryRun); err != nil {
		if r.onError != AssumeNew {
			return fmt.Errorf("redisstate: batch of %d: %w", len(sigs), err)
		}
		for _, k := range sc.pending {
			sc.ans[k] = 0
		}
		r.assumed.Add(uint64(len(sc.pending)))
	}
	var lost uint64
	for i, k := range sc.of {
		// Unless a dry run, every occurrence after the first is a
		// duplicate; but a URL the keyed layout could not store is new
		// each time, as it is on a local keyed state, and counted.
		notStored := sc.ans[k] == uint8(keyed.Full) && !dryRun
		seen[i] = sc.ans[k] == 1 || (sc.met[k] && !dryRun && !notStored)
		sc.met[k] = true
		if notStored {
			lost++
		}
	}
	r.full.Add(lost)
	return nil
}

// Insert decides locs on a Keyed state (storing each fingerprint in the
// first empty slot of B1 then B2, as a decision does) through the same
// pipeline, retries and WAIT as Decide, and sets res[i] to each one's
// answer: keyed.MergeShard's Inserter. A batch Redis did not decide fails,
// whatever OnError says.
func (r *Redis) Insert(ctx context.Context, locs []keyed.Loc, res []keyed.Result) error {
	if !r.keyed {
		return fmt.Errorf("redisstate: %w: Insert on layout %s", format.ErrLayout, r.meta.Spec.Layout)
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	sigs := make([]signature.Signature, len(locs))
	for i, l := range locs {
		sigs[i] = signature.Signature(r.geo.Sum(l))
	}
	sc := r.prepare(sigs)
	defer r.scratch.Put(sc)
	if err := r.decide(ctx, sc, false); err != nil {
		return fmt.Errorf("redisstate: batch of %d: %w", len(locs), err)
	}
	for i, k := range sc.of {
		res[i] = keyed.Result(sc.ans[k])
		if sc.met[k] && res[i] != keyed.Full {
			res[i] = keyed.Dup
		}
		sc.met[k] = true
	}
	return nil
}

// prepare returns scratch holding sigs' distinct signatures, all pending.
func (r *Redis) prepare(sigs []signature.Signature) *scratch {
	sc, _ := r.scratch.Get().(*scratch)
	if sc == nil {
		sc = &scratch{first: make(map[signature.Signature]int, 1024)}
	}
	clear(sc.first)
	sc.sub, sc.of, sc.pending = sc.sub[:0], sc.of[:0], sc.pending[:0]
	for _, s := range sigs {
		k, ok := sc.first[s]
		if !ok {
			k = len(sc.sub)
			sc.first[s] = k
			sc.sub = append(sc.sub, s)
			sc.pending = append(sc.pending, k)
		}
		sc.of = append(sc.of, k)
	}
	if cap(sc.ans) < len(sc.sub) {
		sc.ans, sc.met = make([]uint8, len(sc.sub)), make([]bool, len(sc.sub))
	}
	sc.ans, sc.met = sc.ans[:len(sc.sub)], sc.met[:len(sc.sub)]
	clear(sc.met)
	return sc
}

// decide runs the pending commands until none is left, sending again those
// that provably did not run, with backoff, until ctx ends.
func (r *Redis) decide(ctx context.Context, sc *scratch, dryRun bool) error {
	wait := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		left, retry, err := r.run(ctx, sc, sc.pending, sc.next[:0], dryRun)
		if err != nil {
			return err // sc.pending: every command without an answer
		}
		sc.pending, sc.next = left, sc.pending
		if len(sc.pending) == 0 {
			return nil
		}
		if r.cluster != nil {
			r.cluster.ReloadState(ctx)
		}
		if redis.HasErrorPrefix(retry, "NOSCRIPT") {
			if err := r.cmds.Load(ctx, r.c); err != nil {
				return fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %d commands not run in %d attempts within %v: %v", ErrUnavailable, len(sc.pending), attempt, r.timeout, retry)
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// run sends the commands for ks (indexes in sc.sub) as one pipeline per
// node (see pipes), each followed by a WAIT when the state waits for
// replicas, and records the answers. It returns the indexes whose commands
// provably did not run, appended to left, with the last of their errors,
// or an error that fails the batch.
func (r *Redis) run(ctx context.Context, sc *scratch, ks, left []int, dryRun bool) (_ []int, retry, err error) {
	ps := r.pipes()
	cmds := make([]redis.Cmder, len(ks))
	on := make([]*nodePipe, len(ks))
	for j, k := range ks {
		s := sc.sub[k]
		sh := r.cmds.Shard(s)
		np, e := ps.of(ctx, sh)
		if e != nil { // no master known for the slot: nothing sent
			left, retry = append(left, k), e
			continue
		}
		on[j] = np
		cmds[j] = r.cmds.Queue(ctx, np.pipe, r.keys[sh], s, dryRun)
	}
	replicas := r.replicas
	if dryRun {
		replicas = 0
	}
	ps.exec(ctx, replicas, r.timeout)
	for j, cmd := range cmds {
		if cmd == nil {
			continue
		}
		if e := cmd.Err(); e != nil {
			if !notRun(e) {
				return nil, nil, fmt.Errorf("%w: %v (the batch may have been partly applied)", ErrUnavailable, e)
			}
			left = append(left, ks[j])
			retry = e
			continue
		}
		v, e := answer(cmd)
		if e != nil {
			return nil, nil, fmt.Errorf("%w: %v (the batch may have been partly applied)", ErrUnavailable, e)
		}
		sc.ans[ks[j]] = uint8(v)
		on[j].ran = true
	}
	if replicas > 0 {
		for _, np := range ps.list {
			if !np.ran {
				continue
			}
			if e := np.wait.Err(); e != nil {
				return nil, nil, fmt.Errorf("%w: WAIT: %v (the batch ran on the master; whether a replica has it is unknown)", ErrUnavailable, e)
			}
			if n, e := np.wait.Int64(); e != nil || n < int64(replicas) {
				return nil, nil, fmt.Errorf("%w: %d of %d replicas acknowledged the batch within %v (it ran on the master only)",
					ErrUnavailable, n, replicas, r.timeout)
			}
		}
	}
	return left, retry, nil
}

// answer returns a command's integer answer: a bit (0 or 1) or a keyed
// Result.
func answer(cmd redis.Cmder) (int64, error) {
	var v int64
	var err error
	switch c := cmd.(type) {
	case *redis.IntCmd:
		v, err = c.Result()
	case *redis.Cmd:
		v, err = c.Int64()
	}
	if err == nil && (v < 0 || v > int64(keyed.Full)) {
		err = fmt.Errorf("answer %d out of range", v)
	}
	return v, err
}

// notRun reports whether err proves that a command never ran: no
// connection could be made, or the server refused it before running it.
func notRun(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	if errors.Is(err, redis.ErrPoolTimeout) {
		return true
	}
	for _, p := range []string{"LOADING", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "READONLY", "MOVED", "NOSCRIPT"} {
		if redis.HasErrorPrefix(err, p) {
			return true
		}
	}
	return false
}
