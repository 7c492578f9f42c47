package bitmapwindow

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/keyedwindow"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// OpenRedis: in Redis, a URL is decided by one EVALSHA of the decide
// script on its shard's key, which advances the ring to the current
// generation and decides, as the table does under the state's lock.
func (l bitmapWindow) OpenRedis(_ context.Context, m format.Meta, t layout.Transport) (layout.Remote, error) {
	return &redisCmds{cmds: NewCommands(m.Window, l.now()), t: t, meta: m, now: l.now()}, nil
}

// redisCmds is a windowed bitmap in Redis (layout.RedisCommands).
type redisCmds struct {
	cmds *Commands
	t    layout.Transport
	meta format.Meta
	now  func() time.Time
}

func (c *redisCmds) Shard(sig signature.Signature) int { return int(sig.Shard()) }

func (c *redisCmds) Queue(ctx context.Context, pipe redis.Pipeliner, key string, sig signature.Signature, dryRun bool) redis.Cmder {
	mode := Decide
	if dryRun {
		mode = Check
	}
	return c.cmds.Eval(ctx, pipe, key, sig, mode)
}

// Answer is a reply's answer: the script returns generation·4 + answer
// (1 duplicate, 0 new).
func (*redisCmds) Answer(v int64) int64 { a, _ := Answer(v); return a }

func (*redisCmds) Load(ctx context.Context, c redis.UniversalClient) error { return LoadScript(ctx, c) }

func (*redisCmds) Close(context.Context) error { return nil }

// Report reads every shard key, one at a time (keyedwindow.ReadKey).
func (c *redisCmds) Report(ctx context.Context, where string) (layout.Report, error) {
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	br, err := ReportFrom(c.meta.Window, now(), func(i int, buf []byte) error {
		return keyedwindow.ReadKey(ctx, c.t, i, buf)
	})
	if err != nil {
		return layout.Report{}, err
	}
	return LayoutReport(where, c.meta, br), nil
}

var (
	_ layout.RedisLayout   = bitmapWindow{}
	_ layout.RedisCommands = (*redisCmds)(nil)
	_ layout.AnswerDecoder = (*redisCmds)(nil)
)
