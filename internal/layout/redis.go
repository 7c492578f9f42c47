package layout

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// RedisCommands are a layout's commands on a state in Redis that decides
// each URL by one command on the key of its shard, byte for byte the
// shard file. Package redisstate sends them: pipelines, retries of
// commands that provably did not run, WAIT, cluster routing.
type RedisCommands interface {
	// Shard is the shard whose key holds sig.
	Shard(sig signature.Signature) int
	// Queue queues on pipe the command that decides sig on key, its
	// shard's key. Its integer answer is 0 (new), 1 (dup) or, for the
	// keyed layout, a keyed.Result.
	Queue(ctx context.Context, pipe redis.Pipeliner, key string, sig signature.Signature, dryRun bool) redis.Cmder
	// Load readies the server for the commands (loads their script on
	// every master): at open, and after a command was refused NOSCRIPT.
	Load(ctx context.Context, c redis.UniversalClient) error
}

// RedisLayout is a Layout kept in Redis by RedisCommands.
type RedisLayout interface {
	// RedisCommands returns the commands for a state of metadata m.
	RedisCommands(m format.Meta) (RedisCommands, error)
}
