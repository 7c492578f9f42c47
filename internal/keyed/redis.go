package keyed

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// ErrRedis is returned when Redis did not answer a batch; some of its URLs
// may have been stored.
var ErrRedis = errors.New("keyed: redis")

//go:embed decide.lua
var decideLua string

// decideScript scans b1 then b2 of one shard key and stores the fingerprint
// in the first empty slot, as Table.Decide does, in one atomic server-side
// script: Redis runs a script alone, and both buckets are in the one key,
// so Redis Cluster routes it to one node.
var decideScript = redis.NewScript(decideLua)

// Redis decides URLs on a keyed table held in 256 Redis string keys, one
// per shard, byte for byte the shard files' contents (a key shorter than
// the shard reads as zeros past its end), so migrating is a copy.
type Redis struct {
	c     redis.UniversalClient
	geo   Geometry
	keys  [Shards]string
	newN  atomic.Uint64
	dupN  atomic.Uint64
	fullN atomic.Uint64
}

// NewRedis returns a Redis table of geometry g on c, with shard i in the key
// prefix + ":" + two lower-case hex digits of i.
func NewRedis(c redis.UniversalClient, prefix string, g Geometry) *Redis {
	r := &Redis{c: c, geo: g}
	for i := range r.keys {
		r.keys[i] = fmt.Sprintf("%s:%02x", prefix, i)
	}
	return r
}

// Key returns the key of shard i.
func (r *Redis) Key(i uint8) string { return r.keys[i] }

// Counts returns the decisions made so far.
func (r *Redis) Counts() Counts {
	return Counts{New: r.newN.Load(), Dup: r.dupN.Load(), Full: r.fullN.Load()}
}

// DecideBatch decides every Loc in order, one script run per URL, all in
// one pipeline: res[i] is its answer, as Table.DecideBatch gives. Commands
// on one key run in order, so repeats within the batch are duplicates of
// the first (in a dry run they share its answer).
func (r *Redis) DecideBatch(ctx context.Context, locs []Loc, res []Result, dryRun bool) (c Counts, err error) {
	res = res[:len(locs)]
	cmds, err := r.run(ctx, locs, dryRun)
	if err != nil {
		return c, err
	}
	for i, cmd := range cmds {
		v, err := cmd.Int64()
		if err != nil || v < 0 || v > int64(Full) {
			return Counts{}, fmt.Errorf("%w: batch of %d: %v", ErrRedis, len(locs), err)
		}
		res[i] = Result(v)
		c.add(res[i])
	}
	if !dryRun {
		r.newN.Add(c.New)
		r.dupN.Add(c.Dup)
		r.fullN.Add(c.Full)
	}
	return c, nil
}

// run pipelines EVALSHA for every Loc. Commands refused with NOSCRIPT
// (the server lost its scripts: such a command did not run) are sent once
// more, after loading the script on every node; any other error fails the
// batch.
func (r *Redis) run(ctx context.Context, locs []Loc, dryRun bool) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, len(locs))
	todo := make([]int, len(locs))
	for i := range todo {
		todo[i] = i
	}
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt > 1 {
			return nil, fmt.Errorf("%w: batch of %d: NOSCRIPT after loading the script", ErrRedis, len(locs))
		}
		pipe := r.c.Pipeline()
		for _, i := range todo {
			cmds[i] = r.Eval(ctx, pipe, locs[i], dryRun)
		}
		_, _ = pipe.Exec(ctx) // every command carries its own error
		var again []int
		for _, i := range todo {
			err := cmds[i].Err()
			switch {
			case err == nil:
			case strings.HasPrefix(err.Error(), "NOSCRIPT"):
				again = append(again, i)
			default:
				return nil, fmt.Errorf("%w: batch of %d: %v (the batch may have been partly applied)", ErrRedis, len(locs), err)
			}
		}
		if todo = again; len(todo) > 0 {
			if err := LoadScript(ctx, r.c); err != nil {
				return nil, err
			}
		}
	}
	return cmds, nil
}

// Eval queues on pipe the decision of l: one EVALSHA of the decide script
// on l's shard key. Its answer is a Result as an integer. A command
// refused with NOSCRIPT did not run: call LoadScript and send it again.
func (r *Redis) Eval(ctx context.Context, pipe redis.Pipeliner, l Loc, dryRun bool) *redis.Cmd {
	return eval(ctx, pipe, r.keys[l.Shard], r.geo, l, dryRun)
}

// eval queues on pipe the decision of l on key, its shard's key.
func eval(ctx context.Context, pipe redis.Pipeliner, key string, g Geometry, l Loc, dryRun bool) *redis.Cmd {
	dry := "0"
	if dryRun {
		dry = "1"
	}
	var fp [4]byte
	binary.LittleEndian.PutUint32(fp[:], l.FP)
	return decideScript.EvalSha(ctx, pipe, []string{key},
		int64(l.B1&g.mask)*BucketBytes, int64(l.B2&g.mask)*BucketBytes, string(fp[:]), dry)
}

// OpenRedis: in Redis, a URL is decided by one EVALSHA of the decide
// script on its shard's key.
func (keyedLayout) OpenRedis(_ context.Context, m format.Meta, t layout.Transport) (layout.Remote, error) {
	g, err := NewGeometry(m.Sizes.ShardBytes)
	if err != nil {
		return nil, err
	}
	return &redisCmds{geo: g, t: t, meta: m}, nil
}

// redisCmds is a keyed state in Redis (layout.RedisCommands), and an
// Inserter for MergeShard.
type redisCmds struct {
	geo  Geometry
	t    layout.Transport
	meta format.Meta
}

func (c *redisCmds) Shard(sig signature.Signature) int { return int(uint64(sig) >> 56) }

func (c *redisCmds) Queue(ctx context.Context, pipe redis.Pipeliner, key string, sig signature.Signature, dryRun bool) redis.Cmder {
	return eval(ctx, pipe, key, c.geo, c.geo.Locate(uint64(sig)), dryRun)
}

func (*redisCmds) Load(ctx context.Context, c redis.UniversalClient) error { return LoadScript(ctx, c) }

func (*redisCmds) Close(context.Context) error { return nil }

// Forget forgets sigs, one script run each through the transport's
// pipelines (layout.Idempotent: forgetting twice is forgetting once).
func (c *redisCmds) Forget(ctx context.Context, sigs []signature.Signature, was []bool) error {
	key := func(i int) string { return c.t.Key(format.ShardName(c.Shard(sigs[i]))) }
	replies, err := layout.Idempotent(ctx, c.t, len(sigs), key, func(p redis.Pipeliner, k string, i int) *redis.Cmd {
		l := c.geo.Locate(uint64(sigs[i]))
		var fp [4]byte
		binary.LittleEndian.PutUint32(fp[:], l.FP)
		return decideScript.EvalSha(ctx, p, []string{k},
			int64(l.B1&c.geo.mask)*BucketBytes, int64(l.B2&c.geo.mask)*BucketBytes, string(fp[:]), "f")
	}, func(ctx context.Context) error { return LoadScript(ctx, c.t.Client()) })
	if err != nil {
		return fmt.Errorf("keyed: forget: %w", err)
	}
	for i, v := range replies {
		was[i] = v == 1
	}
	return nil
}

// Insert decides locs (storing each fingerprint in the first empty slot
// of B1 then B2, as a decision does) through the transport's pipeline,
// retries and WAIT, and sets res[i] to each one's answer: MergeShard's
// Inserter. A batch Redis did not decide fails.
func (c *redisCmds) Insert(ctx context.Context, locs []Loc, res []Result) error {
	sigs := make([]signature.Signature, len(locs))
	for i, l := range locs {
		sigs[i] = signature.Signature(c.geo.Sum(l))
	}
	ans, first := make([]uint8, len(locs)), make([]bool, len(locs))
	if err := c.t.Answers(ctx, sigs, ans, first); err != nil {
		return err
	}
	for i := range locs {
		res[i] = Result(ans[i])
		if !first[i] && res[i] != Full {
			res[i] = Dup
		}
	}
	return nil
}

// Report counts the occupied slots of every bucket.
func (c *redisCmds) Report(ctx context.Context, where string) (layout.Report, error) {
	f, err := c.fill(ctx)
	if err != nil {
		return layout.Report{}, err
	}
	return Report(where, c.meta, f), nil
}

// fill counts the occupied slots of every bucket, reading each key in
// pieces of 4 MiB (GETRANGE); bytes a key does not have are empty
// buckets.
func (c *redisCmds) fill(ctx context.Context) (Fill, error) {
	var f Fill
	const piece = 4 << 20
	size := c.meta.Sizes.ShardBytes
	for i := range Shards {
		k := c.t.Key(format.ShardName(i))
		var got int64
		for off := int64(0); off < size; off += piece {
			b, err := c.t.Client().GetRange(ctx, k, off, min(off+piece, size)-1).Bytes()
			if err != nil {
				return f, fmt.Errorf("keyed: GETRANGE %s: %w: %v", k, layout.ErrUnavailable, err)
			}
			short := int64(len(b)) < min(piece, size-off) // the key ends here: the rest is zeros
			if r := len(b) % BucketBytes; r != 0 {
				b = append(b, make([]byte, BucketBytes-r)...) // a key ends where its last slot was written
			}
			f.AddBytes(uint8(i), b)
			got += int64(len(b))
			if short {
				break
			}
		}
		empty := uint64(size-got) / BucketBytes
		f.Hist[0] += empty
		f.Buckets += empty
	}
	return f, nil
}

var (
	_ layout.RedisLayout   = keyedLayout{}
	_ layout.RedisCommands = (*redisCmds)(nil)
	_ Inserter             = (*redisCmds)(nil)
	_ layout.Forgetter     = (*redisCmds)(nil)
)

// The decide script answers a Result, which is layout's answer: the
// lengths below are 0 only if New, Dup and Full are AnswerNew, AnswerDup
// and AnswerNotStored (it does not compile otherwise).
var (
	_ [0]struct{} = [uint8(New) - layout.AnswerNew]struct{}{}
	_ [0]struct{} = [uint8(Dup) - layout.AnswerDup]struct{}{}
	_ [0]struct{} = [uint8(Full) - layout.AnswerNotStored]struct{}{}
)

// LoadScript loads the decide script into c's script cache (on every
// master of a cluster).
func LoadScript(ctx context.Context, c redis.Scripter) error {
	if err := decideScript.Load(ctx, c).Err(); err != nil {
		return fmt.Errorf("%w: load script: %v", ErrRedis, err)
	}
	return nil
}
