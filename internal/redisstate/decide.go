package redisstate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// scratch is one Decide call's working memory, reused across calls.
type scratch struct {
	layout.Batch                             // distinct signatures, their answers, those pending
	met          []bool                      // first occurrence met, when answering
	first        map[signature.Signature]int // signature → index in Sigs
	of           []int                       // batch index → index in Sigs
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
	var err error
	if r.rounds != nil {
		err = r.rounds.Decide(ctx, &sc.Batch, dryRun)
	} else {
		err = r.decide(ctx, sc, dryRun)
	}
	if err != nil {
		if r.onError != AssumeNew {
			return fmt.Errorf("redisstate: batch of %d: %w", len(sigs), err)
		}
		for _, k := range sc.Pending {
			sc.Answers[k] = 0
		}
		r.assumed.Add(uint64(len(sc.Pending)))
	}
	var lost uint64
	for i, k := range sc.of {
		// Unless a dry run, every occurrence after the first is a
		// duplicate; but a URL the layout could not store (keyed.Full) is
		// new each time, as it is on a local state, and counted.
		notStored := sc.Answers[k] == layout.AnswerNotStored && !dryRun
		seen[i] = sc.Answers[k] == layout.AnswerDup || (sc.met[k] && !dryRun && !notStored)
		sc.met[k] = true
		if notStored {
			lost++
		}
	}
	r.full.Add(lost)
	return nil
}

// answers decides sigs by the layout's commands, through the same
// pipeline, retries and WAIT as Decide, and sets ans[i] to the answer of
// sigs[i]'s first occurrence and first[i] to whether it is the first
// (layout.Transport's Answers). A batch Redis did not decide fails,
// whatever OnError says.
func (r *Redis) answers(ctx context.Context, sigs []signature.Signature, ans []uint8, first []bool) error {
	if r.cmds == nil {
		return fmt.Errorf("redisstate: %w: layout %s decides no URL by one command", format.ErrLayout, r.meta.Spec.Layout)
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	sc := r.prepare(sigs)
	defer r.scratch.Put(sc)
	if err := r.decide(ctx, sc, false); err != nil {
		return fmt.Errorf("redisstate: batch of %d: %w", len(sigs), err)
	}
	for i, k := range sc.of {
		ans[i], first[i] = sc.Answers[k], !sc.met[k]
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
	sc.Sigs, sc.of, sc.Pending = sc.Sigs[:0], sc.of[:0], sc.Pending[:0]
	for _, s := range sigs {
		k, ok := sc.first[s]
		if !ok {
			k = len(sc.Sigs)
			sc.first[s] = k
			sc.Sigs = append(sc.Sigs, s)
			sc.Pending = append(sc.Pending, k)
		}
		sc.of = append(sc.of, k)
	}
	if cap(sc.Answers) < len(sc.Sigs) {
		sc.Answers, sc.met = make([]uint8, len(sc.Sigs)), make([]bool, len(sc.Sigs))
	}
	sc.Answers, sc.met = sc.Answers[:len(sc.Sigs)], sc.met[:len(sc.Sigs)]
	clear(sc.met)
	return sc
}

// decide runs the pending commands until none is left, sending again those
// that provably did not run, with backoff, until ctx ends.
func (r *Redis) decide(ctx context.Context, sc *scratch, dryRun bool) error {
	wait := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		left, retry, err := r.run(ctx, sc, sc.Pending, sc.Next[:0], dryRun)
		if err != nil {
			return err // sc.Pending: every command without an answer
		}
		sc.Pending, sc.Next = left, sc.Pending
		if len(sc.Pending) == 0 {
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
			return fmt.Errorf("%w: %d commands not run in %d attempts within %v: %v", ErrUnavailable, len(sc.Pending), attempt, r.timeout, retry)
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// run sends the commands for ks (indexes in sc.Sigs) as one pipeline per
// node (see pipes), each followed by a WAIT when the state waits for
// replicas, and records the answers. It returns the indexes whose commands
// provably did not run, appended to left, with the last of their errors,
// or an error that fails the batch.
func (r *Redis) run(ctx context.Context, sc *scratch, ks, left []int, dryRun bool) (_ []int, retry, err error) {
	ps := r.pipes()
	cmds := make([]redis.Cmder, len(ks))
	on := make([]*nodePipe, len(ks))
	for j, k := range ks {
		s := sc.Sigs[k]
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
		v, e := answer(cmd, r.decode)
		if e != nil {
			return nil, nil, fmt.Errorf("%w: %v (the batch may have been partly applied)", ErrUnavailable, e)
		}
		sc.Answers[ks[j]] = uint8(v)
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

// answer returns a command's integer answer: layout.AnswerNew,
// AnswerDup or AnswerNotStored, through decode when the layout's replies
// carry more (layout.AnswerDecoder).
func answer(cmd redis.Cmder, decode func(int64) int64) (int64, error) {
	var v int64
	var err error
	switch c := cmd.(type) {
	case *redis.IntCmd:
		v, err = c.Result()
	case *redis.Cmd:
		v, err = c.Int64()
	}
	if err == nil && decode != nil {
		v = decode(v)
	}
	if err == nil && (v < 0 || v > int64(layout.AnswerNotStored)) {
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
