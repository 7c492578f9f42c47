package bloomlayout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
)

// treeLayout is the DSBF layout: the Bloom family's, and kept in Redis too.
type treeLayout struct{ family }

// OpenRedis readies a DSBF state in Redis: its tree, and every leaf's
// split flag and count as they are now.
func (treeLayout) OpenRedis(ctx context.Context, m format.Meta, t layout.Transport) (layout.Remote, error) {
	if t.Replicas() > 0 {
		return nil, fmt.Errorf("bloomlayout: %w: layout dsbf does not wait for replicas (--redis-replicas) in this build", format.ErrLayout)
	}
	r := &redisTree{t: t, meta: m, tree: NewTree(m)}
	for i := range r.keys {
		r.keys[i] = t.Key(format.ShardName(i))
		r.leaseKeys[i] = t.Key("lease:" + format.ShardName(i))
	}
	r.scratch.New = func() any { return new(treeScratch) }
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// redisTree is a DSBF state in Redis. It is safe for concurrent use.
type redisTree struct {
	t         layout.Transport
	meta      format.Meta
	tree      *Tree
	keys      [format.Shards]string        // the leaves
	leaseKeys [format.Shards]string        // the room leased from each leaf
	split     [format.Shards]atomic.Bool   // leaves seen split (for ever)
	count     [format.Shards]atomic.Uint64 // each leaf's count, as last known here
	pool      [format.Shards]atomic.Uint64 // room leased from each leaf and not used
	scratch   sync.Pool                    // *treeScratch
}

// treeScratch is one decision's working memory, reused across batches.
type treeScratch struct {
	*layout.Batch                       // the batch's distinct signatures, answers, pending
	slot          []int                 // the leaf each index in Sigs is at
	byLeaf        [format.Shards][]int  // pending indexes by leaf
	pos           []uint64              // one URL's positions
	arena         []any                 // the arguments of a round's commands
	incr          [format.Shards]uint64 // URLs stored per leaf, not yet counted there
	grant         [format.Shards]uint64 // room leased per leaf, not yet used
	refund        [format.Shards]uint64 // leases to give back per leaf
	full          [format.Shards]bool   // leaves whose room is all leased: set their flag
	short         [format.Shards]bool   // leaves whose last lease came back short
}

// Decide decides b's pending signatures on the tree (decideTree).
func (r *redisTree) Decide(ctx context.Context, b *layout.Batch, dryRun bool) error {
	sc := r.scratch.Get().(*treeScratch)
	sc.Batch = b
	defer func() {
		sc.Batch = nil
		r.scratch.Put(sc)
	}()
	return r.decideTree(ctx, sc, dryRun)
}

// Close gives back the room this process leased from the leaves and did
// not use.
func (r *redisTree) Close(ctx context.Context) error { return r.giveBack(ctx) }

// Report measures the state from every leaf's header and bits set.
func (r *redisTree) Report(ctx context.Context, where string) (layout.Report, error) {
	f, err := r.treeReport(ctx)
	if err != nil {
		return layout.Report{}, err
	}
	return StateReport(where, r.meta, f), nil
}

// maxRounds bounds the rounds of one batch, beyond one a URL: a tree of
// 256 leaves is at most 8 deep (c ≥ 2), a leaf near its bound takes a few
// more, and every round decides a URL, sends one to a child, leases room
// or counts, but for commands that provably did not run, sent again within
// the batch's timeout.
const maxRounds = 64

// decideTree decides sc's pending signatures on a DSBF whose leaves are
// keys, in rounds, each one pipeline per node. No script: one BITFIELD per
// leaf and round does what the leaf needs, atomically, in order:
//
//   - INCRBY of the leaf's count by the URLs this process stored in it in
//     earlier rounds (its answer is the count, which every process learns
//     this way);
//   - GET of the split flag, then SET of each sent URL's bits, which
//     returns the old bits: with the flag clear, a URL whose bits were all
//     set is a duplicate and any other is new, decided by this one atomic
//     command. With the flag set (the leaf split before this command, and
//     this process had not yet seen it), a URL whose bits were all set is
//     a duplicate, and any other goes on to its child: it was not in the
//     leaf, and is decided there. Its bits, set in the split leaf, only
//     make that leaf answer "present" for it, which its decision in the
//     child will bear out (once, as always);
//   - SET of the split flag, once the leaf's room is all leased.
//
// Room is leased: a URL is sent to a leaf that can split only under a
// lease of one URL of room, taken from "<prefix>:lease:<leaf>" by INCRBY
// (the leases given out, which never pass the leaf's bound: what a lease
// asked beyond it is given back). A lease a URL did not use (it was a
// duplicate, or went on to a child) is given back by the next INCRBY. So
// the URLs stored in a leaf never pass its bound, whatever the number of
// writers; when a lease gets no room the leaf is full, and the process
// sets its split flag. The URLs without room are read (BITFIELD_RO) in the
// same pipeline as their lease, after the leaf's BITFIELD: those it holds
// are duplicates at once, the rest wait for room or, once the flag is set,
// go on to their child.
//
// URLs at a leaf known to have split (the flag is never cleared) are read
// only: a URL whose bits are all set is a duplicate, any other goes on to
// its child. Every read (BITFIELD_RO) reads the split flag in the same
// atomic command as the bits, and only that flag sends a URL down: what
// the process knows of the leaf when the answer comes back may be newer
// than the read (another batch in flight may have split it since), and a
// URL stored in the leaf between the read and the split would otherwise
// be decided new a second time in the child. A batch ends when its URLs
// are decided and its counts and unused leases are given back.
func (r *redisTree) decideTree(ctx context.Context, sc *treeScratch, dryRun bool) error {
	t := r.tree
	if cap(sc.slot) < len(sc.Sigs) {
		sc.slot = make([]int, len(sc.Sigs))
	}
	sc.slot = sc.slot[:len(sc.Sigs)]
	for _, ki := range sc.Pending {
		sc.slot[ki] = t.First(uint64(sc.Sigs[ki]))
	}
	clear(sc.incr[:])
	clear(sc.grant[:])
	clear(sc.refund[:])
	clear(sc.full[:])
	clear(sc.short[:])
	owed := func(s int) bool { return sc.incr[s] > 0 || sc.refund[s] > 0 || sc.full[s] }
	wait := 20 * time.Millisecond
	for round := 0; ; round++ {
		if len(sc.Pending) == 0 && !slices.ContainsFunc(sc.incr[:], func(n uint64) bool { return n > 0 }) &&
			!slices.ContainsFunc(sc.refund[:], func(n uint64) bool { return n > 0 }) && !slices.Contains(sc.full[:], true) {
			for s, n := range sc.grant {
				if n > 0 && !r.split[s].Load() {
					r.pool[s].Add(n) // room this process holds, for its next batches
				}
			}
			return nil
		}
		if round == maxRounds+len(sc.Sigs) {
			return fmt.Errorf("%w: %d URLs not decided in %d rounds", layout.ErrUnavailable, len(sc.Pending), round)
		}
		for s := range sc.byLeaf {
			sc.byLeaf[s] = sc.byLeaf[s][:0]
		}
		for _, ki := range sc.Pending {
			sc.byLeaf[sc.slot[ki]] = append(sc.byLeaf[sc.slot[ki]], ki)
		}
		ps := r.t.Pipes()
		var calls []leafCall
		clear(sc.arena) // the last round's commands are done: let their values go
		sc.arena = sc.arena[:0]
		next := sc.Next[:0]
		var retry error
		for s, ks := range sc.byLeaf {
			if len(ks) == 0 && (dryRun || !owed(s)) {
				continue
			}
			c, err := r.leafCall(ctx, ps, sc, s, dryRun)
			if err != nil { // no master known for a slot: nothing sent
				next, retry = append(next, ks...), err
				continue
			}
			calls = append(calls, c)
		}
		ps.Exec(ctx)
		for _, c := range calls {
			var err error
			if next, retry, err = r.leafAnswers(sc, c, next, retry); err != nil {
				return err
			}
		}
		sc.Pending, sc.Next = next, sc.Pending
		if retry == nil {
			continue
		}
		r.t.Refused(ctx)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %d URLs not decided within %v: %v", layout.ErrUnavailable, len(sc.Pending), r.t.Timeout(), retry)
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// leafCall is one leaf's commands of a round.
type leafCall struct {
	leaf  int
	dry   bool
	write *redis.IntSliceCmd // BITFIELD: [INCRBY count] [GET flag, SET bits of sent URLs] [SET flag]
	incr  uint64             // the INCRBY's increment (0: none)
	flag  bool               // write sets the split flag
	sent  int                // URLs (the first of the leaf's) whose bits write sets
	read  *redis.IntSliceCmd // BITFIELD_RO: the split flag, then the bits of the leaf's URLs from sent on
	lease *redis.IntCmd      // INCRBY of the leases: want, less what is given back
	want  uint64             // room asked
	back  uint64             // leases given back
}

// Offsets of a DSBF leaf's header fields, in bits, most significant first
// as BITFIELD counts them: the split flag is byte 7 (set as one byte, read
// as bytes 0–7, any of them not zero, as the state directory reads it),
// the count the low 63 bits of bytes 8–15 (big-endian, as the state
// directory has them).
const (
	flagOffset  = 56
	countOffset = 65
)

// flagGet is the BITFIELD operation that reads a leaf's split flag: bytes
// 0–7 as one signed 64-bit field, not zero when any of them is set.
var flagGet = [...]any{"GET", "i64", 0}

// redisOffset is Redis's bit offset (most significant bit first within a
// byte) of filter bit p of a leaf, which is bit 512 + p of the key,
// least significant first.
func redisOffset(p uint64) uint64 {
	b := p + format.LeafHeaderBytes*8
	return b&^7 | (7 - b&7)
}

// appendBits appends op ("SET" or "GET") of every bit of the URLs ks.
func (r *redisTree) appendBits(args []any, sc *treeScratch, ks []int, op string) []any {
	for _, ki := range ks {
		sc.pos = r.tree.Positions(sc.pos[:0], uint64(sc.Sigs[ki]))
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
func (r *redisTree) leafCall(ctx context.Context, ps layout.Pipes, sc *treeScratch, s int, dryRun bool) (leafCall, error) {
	t := r.tree
	ks := sc.byLeaf[s]
	c := leafCall{leaf: s, dry: dryRun}
	np, err := ps.For(ctx, r.keys[s])
	if err != nil {
		return c, err
	}
	var lp redis.Pipeliner // the lease key's node
	limit, can := t.Limit(s)
	if !dryRun && can && (len(ks) > 0 || sc.refund[s] > 0) {
		if lp, err = ps.For(ctx, r.leaseKeys[s]); err != nil {
			return c, err
		}
	}
	split := r.split[s].Load()
	if split {
		sc.full[s] = false // split by another: nothing to set
	}
	if !dryRun {
		start := len(sc.arena)
		args := append(sc.arena, "BITFIELD", r.keys[s])
		if c.incr = sc.incr[s]; c.incr > 0 {
			sc.incr[s] = 0
			args = append(args, "INCRBY", "u63", countOffset, c.incr)
		}
		if !split && len(ks) > 0 {
			c.sent = len(ks)
			if can {
				if need := uint64(c.sent); sc.grant[s] < need {
					sc.grant[s] += r.take(s, need-sc.grant[s])
				}
				c.sent = min(c.sent, int(sc.grant[s]))
				sc.grant[s] -= uint64(c.sent)
			}
			if c.sent > 0 {
				args = append(args, flagGet[:]...)
				args = r.appendBits(args, sc, ks[:c.sent], "SET")
			}
		}
		if !split && sc.full[s] {
			args = append(args, "SET", "u8", flagOffset, 1)
			c.flag = true
		}
		sc.arena = args
		if len(args) > start+2 {
			c.write = redis.NewIntSliceCmd(ctx, args[start:len(args):len(args)]...)
			_ = np.Process(ctx, c.write)
		}
	}
	// URLs without room are read where the leaf is full (their flag
	// is set this round, or their lease came back short), so that those it
	// holds are duplicates at once and the rest go on once it is split;
	// elsewhere they wait for the room they asked for.
	if len(ks) > c.sent && (dryRun || split || c.flag || sc.short[s] || !can) {
		start := len(sc.arena)
		args := append(append(sc.arena, "BITFIELD_RO", r.keys[s]), flagGet[:]...)
		args = r.appendBits(args, sc, ks[c.sent:], "GET")
		sc.arena = args
		c.read = redis.NewIntSliceCmd(ctx, args[start:len(args):len(args)]...)
		_ = np.Process(ctx, c.read)
	}
	if lp != nil {
		if n := uint64(len(ks) - c.sent); n > 0 && !split && !c.flag && !sc.full[s] {
			// Up to as much again for the process's next batches (fewer
			// rounds), but no more than a 64th of the room the leaf had
			// when last heard of, so that room held by writers that do
			// not use it splits a leaf little short of its bound; never
			// more than that room, so that little is asked past the bound
			// and given back (room asked and not yet given back looks
			// taken to others); at least one, to learn whether it is full.
			room := limit - min(limit, r.count[s].Load())
			c.want = max(min(n+min(n, room/64), room), 1)
		}
		c.back = sc.refund[s]
		sc.refund[s] = 0
		if c.want > 0 || c.back > 0 {
			c.lease = lp.IncrBy(ctx, r.leaseKeys[s], int64(c.want)-int64(c.back))
		}
	}
	return c, nil
}

// leafAnswers records the answers of one leaf's commands, appending to
// next the URLs left for the next round (those not sent, and those sent
// on to a child). Commands that provably did not run leave their URLs,
// counts and leases for the next round, and are returned as retry.
func (r *redisTree) leafAnswers(sc *treeScratch, c leafCall, next []int, retry error) ([]int, error, error) {
	t := r.tree
	k := t.K()
	s := c.leaf
	ks := sc.byLeaf[s]
	leafErr := func(e error) error {
		return fmt.Errorf("%w: leaf %s: %v (the batch may have been partly applied)", layout.ErrUnavailable, format.ShardName(s), e)
	}
	allSet := func(bits []int64) bool { return !slices.Contains(bits, 0) }
	unsent := ks[c.sent:]
	wrote := true
	if c.write != nil {
		if e := c.write.Err(); e != nil {
			if !r.t.NotRun(e) {
				return next, retry, leafErr(e)
			}
			sc.incr[s] += c.incr
			sc.grant[s] += uint64(c.sent)
			next, retry, wrote = append(next, ks[:c.sent]...), e, false
		} else {
			vals := c.write.Val()
			want := len(vals)
			if c.incr > 0 {
				want--
				n := uint64(max(vals[0], 0))
				r.learnCount(s, n)
				if limit, can := t.Limit(s); can && n >= limit && !r.split[s].Load() {
					sc.full[s] = true // its room is all stored: split it, as a directory's leaf after its last URL
				}
				vals = vals[1:]
			}
			if c.flag {
				want--
				r.split[s].Store(true)
				sc.full[s] = false
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
						sc.Answers[ki] = 1
					case splitBefore: // not in the leaf: decided in its child
						sc.slot[ki] = t.Child(s, uint64(sc.Sigs[ki]))
						next = append(next, ki)
					default:
						sc.Answers[ki] = 0
						stored++
					}
				}
				if _, can := t.Limit(s); can && !splitBefore {
					sc.grant[s] += uint64(c.sent) - stored // room not used: the next URL's
				}
				sc.incr[s] += stored
				r.count[s].Add(stored)
			}
		}
	}
	if c.lease != nil {
		if e := c.lease.Err(); e != nil {
			if !r.t.NotRun(e) {
				return next, retry, leafErr(e)
			}
			sc.refund[s] += c.back
			retry = e
		} else {
			limit, _ := t.Limit(s)
			given := uint64(max(c.lease.Val(), 0)) // leases out, with ours
			before := given - min(given, c.want)   // before our ask, after our give-back
			granted := min(c.want, limit-min(limit, before))
			sc.grant[s] += granted
			sc.refund[s] += c.want - granted // asked past the bound: given back
			sc.short[s] = granted < c.want
			if c.want > 0 && granted == 0 {
				sc.full[s] = true // every URL of room is leased: split it
			}
		}
	}
	if c.read == nil {
		return append(next, unsent...), retry, nil
	}
	if e := c.read.Err(); e != nil || !wrote {
		if e != nil && !r.t.NotRun(e) {
			return next, retry, leafErr(e)
		}
		if e != nil {
			retry = e
		}
		return append(next, unsent...), retry, nil
	}
	// The flag as it was when the bits were read (this round's write, before
	// the read, included), never what the process knows now.
	bits := c.read.Val()
	if len(bits) != 1+k*len(unsent) {
		return next, retry, leafErr(fmt.Errorf("%d fields read for %d URLs", len(bits), len(unsent)))
	}
	split := t.Split(s, bits[0] != 0)
	if split {
		r.split[s].Store(true)
	}
	bits = bits[1:]
	for j, ki := range unsent {
		switch {
		case allSet(bits[j*k : (j+1)*k]):
			sc.Answers[ki] = 1
		case split:
			sc.slot[ki] = t.Child(s, uint64(sc.Sigs[ki]))
			next = append(next, ki)
		case c.dry:
			sc.Answers[ki] = 0
		default: // a live leaf without room for it yet
			next = append(next, ki)
		}
	}
	return next, retry, nil
}

// take takes up to n URLs of room from what this process holds of leaf
// s.
func (r *redisTree) take(s int, n uint64) uint64 {
	for {
		have := r.pool[s].Load()
		got := min(have, n)
		if got == 0 || r.pool[s].CompareAndSwap(have, have-got) {
			return got
		}
	}
}

// giveBack gives back the room this process holds of every live leaf, so
// that other writers can fill it (Close calls it; a process killed keeps
// its room, and its leaves split that much short of their bounds).
func (r *redisTree) giveBack(ctx context.Context) error {
	if r.tree == nil {
		return nil
	}
	ps := r.t.Pipes()
	var cmds []*redis.IntCmd
	for s := range r.pool {
		n := r.pool[s].Swap(0)
		if n == 0 || r.split[s].Load() {
			continue
		}
		np, err := ps.For(ctx, r.leaseKeys[s])
		if err != nil {
			return err
		}
		cmds = append(cmds, np.DecrBy(ctx, r.leaseKeys[s], int64(n)))
	}
	if len(cmds) == 0 {
		return nil
	}
	ps.Exec(ctx)
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			return fmt.Errorf("bloomlayout: give back leased room: %w: %v", layout.ErrUnavailable, err)
		}
	}
	return nil
}

// learnCount records a leaf's count as Redis answered it: the most of
// what this process knew and what Redis says.
func (r *redisTree) learnCount(s int, n uint64) {
	for {
		old := r.count[s].Load()
		if n <= old || r.count[s].CompareAndSwap(old, n) {
			return
		}
	}
}

// load reads every leaf's split flag and count as they are now.
func (r *redisTree) load(ctx context.Context) error {
	leaves, err := r.leaves(ctx)
	if err != nil {
		return err
	}
	pipe := r.t.Client().Pipeline()
	for s, l := range leaves {
		r.split[s].Store(r.tree.Split(s, l.Split))
		r.count[s].Store(l.URLs)
		if l.URLs > 0 { // a leaf copied in, or from a build without leases: its URLs hold their room
			pipe.SetNX(ctx, r.leaseKeys[s], l.URLs, 0)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("bloomlayout: %w: %v", layout.ErrUnavailable, err)
	}
	return nil
}

// leaves reads every leaf's header (GETRANGE) and bits set (BITCOUNT past
// the header), in one pipeline.
func (r *redisTree) leaves(ctx context.Context) ([]Leaf, error) {
	pipe := r.t.Client().Pipeline()
	heads := make([]*redis.StringCmd, format.Shards)
	counts := make([]*redis.IntCmd, format.Shards)
	for s := range heads {
		heads[s] = pipe.GetRange(ctx, r.keys[s], 0, 15)
		counts[s] = pipe.BitCount(ctx, r.keys[s], &redis.BitCount{Start: format.LeafHeaderBytes, End: -1})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("bloomlayout: %w: %v", layout.ErrUnavailable, err)
	}
	leaves := make([]Leaf, format.Shards)
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

// treeReport measures the tree from every leaf's header and bits set.
func (r *redisTree) treeReport(ctx context.Context) (Report, error) {
	rep := Report{Shards: make([]uint64, format.Shards)}
	leaves, err := r.leaves(ctx)
	if err != nil {
		return rep, err
	}
	r.tree.Report(&rep, leaves)
	return rep, nil
}

var (
	_ layout.RedisLayout = treeLayout{}
	_ layout.RedisRounds = (*redisTree)(nil)
)
