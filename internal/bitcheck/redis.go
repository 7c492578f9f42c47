package bitcheck

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// RedisCommands: in Redis, a signature's bit is decided by one SETBIT (a
// dry run: GETBIT) on its shard's key, whose bytes are the shard file's.
func (bitmap) RedisCommands(format.Meta) (layout.RedisCommands, error) { return redisBits{}, nil }

type redisBits struct{}

func (redisBits) Shard(sig signature.Signature) int { return int(sig.Shard()) }

func (redisBits) Queue(ctx context.Context, pipe redis.Pipeliner, key string, sig signature.Signature, dryRun bool) redis.Cmder {
	if dryRun {
		return pipe.GetBit(ctx, key, RedisOffset(sig.Bit()))
	}
	return pipe.SetBit(ctx, key, RedisOffset(sig.Bit()), 1)
}

func (redisBits) Load(context.Context, redis.UniversalClient) error { return nil }

// RedisOffset maps a bit to its Redis SETBIT offset, so that the string's
// bytes equal the shard file's (least significant bit first within each
// byte; Redis counts most significant first).
func RedisOffset(bit uint32) int64 { return int64(bit&^7 | (7 - bit&7)) }

var _ layout.RedisLayout = bitmap{}
