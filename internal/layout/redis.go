package layout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// ErrUnavailable wraps a failure to reach Redis or to run a batch; it is
// redisstate.ErrUnavailable, which a layout's Redis code returns through
// this name.
var ErrUnavailable = errors.New("redis unavailable")

// The answers of a layout's Redis commands (RedisCommands.Queue) and of
// a RedisRounds decision (Batch.Answers).
const (
	AnswerNew       uint8 = 0 // absent, now stored (in a dry run: absent)
	AnswerDup       uint8 = 1 // present: a duplicate
	AnswerNotStored uint8 = 2 // absent, and no room to store it: new, not stored
)

// RedisLayout is a Layout that a state in Redis can hold (package
// redisstate is the transport). A layout that is not one is kept in state
// directories only.
type RedisLayout interface {
	// OpenRedis readies the layout's half of the state in Redis of
	// metadata m, reached through t: a RedisCommands (one command a URL)
	// or a RedisRounds (a protocol of its own).
	OpenRedis(ctx context.Context, m format.Meta, t Transport) (Remote, error)
}

// Remote is a layout's half of a state in Redis: what it reads and what
// it holds. It is a RedisCommands or a RedisRounds.
type Remote interface {
	// Report measures the state from its keys; where names it.
	Report(ctx context.Context, where string) (Report, error)
	// Close gives back what this process holds of the state (the DSBF's
	// leased room); the transport closes the connections after it.
	Close(ctx context.Context) error
}

// RedisCommands are a layout's commands on a state in Redis that decides
// each URL by one command on the key of its shard, byte for byte the
// shard file. Package redisstate sends them: pipelines, retries of
// commands that provably did not run, WAIT, cluster routing.
type RedisCommands interface {
	Remote
	// Shard is the shard whose key holds sig.
	Shard(sig signature.Signature) int
	// Queue queues on pipe the command that decides sig on key, its
	// shard's key. Its integer answer is AnswerNew, AnswerDup or
	// AnswerNotStored.
	Queue(ctx context.Context, pipe redis.Pipeliner, key string, sig signature.Signature, dryRun bool) redis.Cmder
	// Load readies the server for the commands (loads their script on
	// every master): at open, and after a command was refused NOSCRIPT.
	Load(ctx context.Context, c redis.UniversalClient) error
}

// RedisRounds is a layout that decides a batch in Redis by a protocol of
// its own (the DSBF: rounds, leases), sent through the Transport.
type RedisRounds interface {
	Remote
	// Decide decides b's pending signatures, setting their answers, and
	// leaves in b.Pending those it could not decide when it fails.
	Decide(ctx context.Context, b *Batch, dryRun bool) error
}

// Batch is one decision's distinct signatures as the transport hands them
// to a RedisRounds; its slices are reused across batches.
type Batch struct {
	Sigs    []signature.Signature // the distinct signatures
	Answers []uint8               // their answers (AnswerNew, AnswerDup), by index in Sigs
	Pending []int                 // indexes in Sigs not yet decided
	Next    []int                 // spare room for the next round's Pending
}

// Transport is what package redisstate gives a layout's Redis code: the
// state's keys and client, one round's pipelines per node, and which
// errors prove that a command never ran.
type Transport interface {
	// Client is the client, for reads outside a decision (opening,
	// reports).
	Client() redis.UniversalClient
	// Key is the name of the state's key "<prefix>:<name>" (a shard's
	// key: format.ShardName).
	Key(name string) string
	// Pipes returns one round's pipelines, one per node.
	Pipes() Pipes
	// NotRun reports whether err proves that a command never ran (no
	// connection could be made; LOADING, CLUSTERDOWN, TRYAGAIN,
	// MASTERDOWN, READONLY, MOVED, NOSCRIPT): only such a command may be
	// sent again.
	NotRun(err error) bool
	// Refused is called after a round with commands refused unrun,
	// before sending them again: a cluster learns its slots again.
	Refused(ctx context.Context)
	// Timeout is a batch's time, retries included.
	Timeout() time.Duration
	// Replicas is how many replicas every batch waits for (WAIT).
	Replicas() int
	// Answers decides sigs by the layout's RedisCommands (each distinct
	// signature once, with the transport's retries and WAIT) and sets
	// ans[i] to the answer of sigs[i]'s first occurrence and first[i] to
	// whether it is the first.
	Answers(ctx context.Context, sigs []signature.Signature, ans []uint8, first []bool) error
}

// Pipes are one round's pipelines: one for a single server, one per
// master of a cluster. Every command carries its own reply and error.
type Pipes interface {
	// For returns the pipeline of the node that holds key, or an error
	// when none is known for its slot (nothing was sent).
	For(ctx context.Context, key string) (redis.Pipeliner, error)
	// Exec runs every pipeline at once.
	Exec(ctx context.Context)
}

// Idempotent runs n commands that may be run twice with no harm (a
// forget) through t's pipelines: queue(pipe, i) queues command i on the
// pipeline of key(i)'s node. Commands that did not run, or whose reply
// was lost, are sent again, a few rounds at most; load reloads a script
// refused with NOSCRIPT. It returns each command's integer reply.
func Idempotent(ctx context.Context, t Transport, n int, key func(i int) string,
	queue func(pipe redis.Pipeliner, key string, i int) *redis.Cmd, load func(ctx context.Context) error) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, t.Timeout())
	defer cancel()
	todo := make([]int, n)
	for i := range todo {
		todo[i] = i
	}
	cmds, out := make([]*redis.Cmd, n), make([]int64, n)
	var last error
	for round := 0; len(todo) > 0; round++ {
		if round == 5 || ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %d commands not run: %v", ErrUnavailable, len(todo), last)
		}
		pipes := t.Pipes()
		for _, i := range todo {
			k := key(i)
			p, err := pipes.For(ctx, k)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			cmds[i] = queue(p, k, i)
		}
		pipes.Exec(ctx)
		var again []int
		noscript := false
		for _, i := range todo {
			v, err := cmds[i].Int64()
			if err == nil {
				out[i] = v
				continue
			}
			last, noscript = err, noscript || strings.HasPrefix(err.Error(), "NOSCRIPT")
			again = append(again, i)
		}
		if todo = again; len(todo) > 0 {
			t.Refused(ctx)
			if noscript {
				if err := load(ctx); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}
