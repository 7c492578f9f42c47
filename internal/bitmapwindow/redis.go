package bitmapwindow

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/window"
)

// ErrRedis is returned when Redis did not run a script it was sent.
var ErrRedis = errors.New("bitmapwindow: redis")

//go:embed decide.lua
var decideLua string

// decideScript advances a shard key and decides or checks one signature on
// it, as Table does under the state's lock, in one script Redis runs
// alone, on one key (one Redis Cluster node).
var decideScript = redis.NewScript(decideLua)

// Mode is what a script run does.
type Mode byte

const (
	Decide Mode = 'd'
	Check  Mode = 'c'
)

// Commands queue the windowed bitmap layout's Redis commands.
type Commands struct {
	spec window.Spec
	now  func() time.Time
}

// NewCommands returns the commands of a window; clock replaces time.Now
// when not nil.
func NewCommands(spec window.Spec, clock func() time.Time) *Commands {
	if clock == nil {
		clock = time.Now
	}
	return &Commands{spec: spec, now: clock}
}

// Eval queues on pipe what mode does for sig on key, its shard's key. Its
// reply is an integer that Answer splits. A command refused with NOSCRIPT
// did not run: call LoadScript and send it again.
func (c *Commands) Eval(ctx context.Context, pipe redis.Pipeliner, key string, sig signature.Signature, mode Mode) *redis.Cmd {
	return decideScript.EvalSha(ctx, pipe, []string{key}, sig.Bit(), c.spec.Gen(c.now()), c.spec.Generations, int(c.spec.Policy), string(mode))
}

// Answer splits a script's reply: 1 duplicate (held) or 0, and the
// generation the shard was at.
func Answer(v int64) (answer, gen int64) { return v & 3, v >> 2 }

// LoadScript loads the script into c's script cache (every master of a
// cluster).
func LoadScript(ctx context.Context, c redis.Scripter) error {
	if err := decideScript.Load(ctx, c).Err(); err != nil {
		return fmt.Errorf("%w: load script: %v", ErrRedis, err)
	}
	return nil
}
