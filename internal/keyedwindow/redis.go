package keyedwindow

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/window"
)

// ErrRedis is returned when Redis did not run a script it was sent.
var ErrRedis = errors.New("keyedwindow: redis")

//go:embed decide.lua
var decideLua string

// decideScript advances a shard key to the current generation and decides,
// checks or forgets one URL on it, as Table does under the state's lock:
// Redis runs a script alone, and everything is in the one key, so Redis
// Cluster routes it to one node.
var decideScript = redis.NewScript(decideLua)

// Mode is what a script run does.
type Mode byte

const (
	Decide Mode = 'd'
	Check  Mode = 'c'
	Forget Mode = 'f'
)

// Commands queue the windowed keyed layout's Redis commands: one EVALSHA of
// the decide script a URL, on its shard's key.
type Commands struct {
	spec window.Spec
	geo  keyed.Geometry // of a shard's bucket area
	now  func() time.Time
}

// NewCommands returns the commands of a window over shards whose bucket
// area has geometry geo; clock replaces time.Now when not nil.
func NewCommands(spec window.Spec, geo keyed.Geometry, clock func() time.Time) *Commands {
	if clock == nil {
		clock = time.Now
	}
	return &Commands{spec: spec, geo: geo, now: clock}
}

// Eval queues on pipe what mode does for l on key, l's shard key. Its
// reply is an integer that Answer splits. A command refused with NOSCRIPT
// did not run: call LoadScript and send it again.
func (c *Commands) Eval(ctx context.Context, pipe redis.Pipeliner, key string, l keyed.Loc, mode Mode) *redis.Cmd {
	s := c.spec
	return decideScript.EvalSha(ctx, pipe, []string{key},
		HeaderBytes+int64(l.B1)*keyed.BucketBytes, HeaderBytes+int64(l.B2)*keyed.BucketBytes,
		window.Fingerprint(l.FP), s.Gen(c.now()), s.Generations, int(s.Policy), string(mode),
		c.geo.Buckets(), s.SweepHorizon(), s.JumpLimit())
}

// LoadScript loads the decide script into c's script cache (on every
// master of a cluster).
func LoadScript(ctx context.Context, c redis.Scripter) error {
	if err := decideScript.Load(ctx, c).Err(); err != nil {
		return fmt.Errorf("%w: load script: %v", ErrRedis, err)
	}
	return nil
}

// Answer splits a script's reply into its answer (a window.Result for
// Decide; 1 held or 0 for Check and Forget) and the generation the shard
// was at.
func Answer(v int64) (answer, gen int64) { return v & 3, v >> 2 }
