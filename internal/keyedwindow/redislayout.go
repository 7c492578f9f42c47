package keyedwindow

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// OpenRedis: in Redis, a URL is decided by one EVALSHA of the decide
// script on its shard's key, which advances the key to the current
// generation and decides, as the table does under the state's lock.
func (l keyedWindow) OpenRedis(_ context.Context, m format.Meta, t layout.Transport) (layout.Remote, error) {
	g, err := keyed.NewGeometry(m.Sizes.ShardBytes - HeaderBytes)
	if err != nil {
		return nil, err
	}
	return &redisCmds{cmds: NewCommands(m.Window, g, l.now()), geo: g, t: t, meta: m, now: l.now()}, nil
}

// redisCmds is a windowed keyed state in Redis (layout.RedisCommands).
type redisCmds struct {
	cmds *Commands
	geo  keyed.Geometry
	t    layout.Transport
	meta format.Meta
	now  func() time.Time
}

func (c *redisCmds) Shard(sig signature.Signature) int { return int(uint64(sig) >> 56) }

func (c *redisCmds) Queue(ctx context.Context, pipe redis.Pipeliner, key string, sig signature.Signature, dryRun bool) redis.Cmder {
	mode := Decide
	if dryRun {
		mode = Check
	}
	return c.cmds.Eval(ctx, pipe, key, c.geo.Locate(uint64(sig)), mode)
}

// Answer is a reply's answer: the script returns generation·4 + answer
// (window.Result, or 1 held and 0 not for a check), the same numbers as
// layout's answers.
func (*redisCmds) Answer(v int64) int64 { a, _ := Answer(v); return a }

func (*redisCmds) Load(ctx context.Context, c redis.UniversalClient) error { return LoadScript(ctx, c) }

func (*redisCmds) Close(context.Context) error { return nil }

// Forget forgets sigs, one script run each through the transport's
// pipelines (layout.Idempotent: forgetting twice is forgetting once).
func (c *redisCmds) Forget(ctx context.Context, sigs []signature.Signature, was []bool) error {
	key := func(i int) string { return c.t.Key(format.ShardName(c.Shard(sigs[i]))) }
	replies, err := layout.Idempotent(ctx, c.t, len(sigs), key, func(p redis.Pipeliner, k string, i int) *redis.Cmd {
		return c.cmds.Eval(ctx, p, k, c.geo.Locate(uint64(sigs[i])), Forget)
	}, func(ctx context.Context) error { return LoadScript(ctx, c.t.Client()) })
	if err != nil {
		return fmt.Errorf("keyedwindow: forget: %w", err)
	}
	for i, v := range replies {
		a, _ := Answer(v)
		was[i] = a == 1
	}
	return nil
}

// Report reads every shard key, one at a time, in pieces of 4 MiB
// (GETRANGE); bytes a key does not have are zeros.
func (c *redisCmds) Report(ctx context.Context, where string) (layout.Report, error) {
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	kr, err := ReportFrom(c.meta.Window, c.meta.Sizes.ShardBytes, now(), func(i int, buf []byte) error {
		return ReadKey(ctx, c.t, i, buf)
	})
	if err != nil {
		return layout.Report{}, err
	}
	return LayoutReport(where, c.meta, kr), nil
}

// ReadKey reads shard i's key through t into buf, in pieces of 4 MiB
// (GETRANGE), leaving what the key does not have as it is.
func ReadKey(ctx context.Context, t layout.Transport, i int, buf []byte) error {
	const piece = 4 << 20
	k := t.Key(format.ShardName(i))
	size := int64(len(buf))
	for off := int64(0); off < size; off += piece {
		b, err := t.Client().GetRange(ctx, k, off, min(off+piece, size)-1).Bytes()
		if err != nil {
			return fmt.Errorf("GETRANGE %s: %w: %v", k, layout.ErrUnavailable, err)
		}
		copy(buf[off:], b)
		if int64(len(b)) < min(piece, size-off) {
			return nil // the key ends here
		}
	}
	return nil
}

var (
	_ layout.RedisLayout   = keyedWindow{}
	_ layout.RedisCommands = (*redisCmds)(nil)
	_ layout.AnswerDecoder = (*redisCmds)(nil)
	_ layout.Forgetter     = (*redisCmds)(nil)
)
