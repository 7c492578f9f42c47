package bitcheck

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// OpenRedis: in Redis, a signature's bit is decided by one SETBIT (a dry
// run: GETBIT) on its shard's key, whose bytes are the shard file's.
func (bitmap) OpenRedis(_ context.Context, m format.Meta, t layout.Transport) (layout.Remote, error) {
	return &redisBits{t: t, meta: m}, nil
}

// redisBits is a bitmap state in Redis (layout.RedisCommands).
type redisBits struct {
	t    layout.Transport
	meta format.Meta
}

func (*redisBits) Shard(sig signature.Signature) int { return int(sig.Shard()) }

func (*redisBits) Queue(ctx context.Context, pipe redis.Pipeliner, key string, sig signature.Signature, dryRun bool) redis.Cmder {
	if dryRun {
		return pipe.GetBit(ctx, key, RedisOffset(sig.Bit()))
	}
	return pipe.SetBit(ctx, key, RedisOffset(sig.Bit()), 1)
}

func (*redisBits) Load(context.Context, redis.UniversalClient) error { return nil }

func (*redisBits) Close(context.Context) error { return nil }

// Report counts the set bits of every key (BITCOUNT).
func (r *redisBits) Report(ctx context.Context, where string) (layout.Report, error) {
	f, err := r.fill(ctx)
	if err != nil {
		return layout.Report{}, err
	}
	return Report(where, r.meta, f), nil
}

// fill counts the set bits of every key (BITCOUNT), in one pipeline.
func (r *redisBits) fill(ctx context.Context) (Fill, error) {
	var f Fill
	pipe := r.t.Client().Pipeline()
	cmds := make([]*redis.IntCmd, signature.Shards)
	for i := range cmds {
		cmds[i] = pipe.BitCount(ctx, r.t.Key(format.ShardName(i)), nil)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return f, fmt.Errorf("bitcheck: BITCOUNT: %w: %v", layout.ErrUnavailable, err)
	}
	for i, c := range cmds {
		f.Shard[i] = uint64(c.Val())
	}
	return f, nil
}

// RedisOffset maps a bit to its Redis SETBIT offset, so that the string's
// bytes equal the shard file's (least significant bit first within each
// byte; Redis counts most significant first).
func RedisOffset(bit uint32) int64 { return int64(bit&^7 | (7 - bit&7)) }

var (
	_ layout.RedisLayout   = bitmap{}
	_ layout.RedisCommands = (*redisBits)(nil)
)
