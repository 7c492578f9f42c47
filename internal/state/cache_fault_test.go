package state_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/bitcheck"
	"github.com/urldedupd/urldedupd/internal/redisstate"
	"github.com/urldedupd/urldedupd/internal/redistest"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// A local cache whose shard is truncated under the process: a batch that
// touches it fails with shardfile.ErrFault naming the shard, instead of
// the process dying of SIGBUS; batches in other shards still work.
func TestCachedTruncatedShard(t *testing.T) {
	ctx := context.Background()
	r, err := redisstate.Open(ctx, redistest.Server(t), &redisstate.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d, err := shardfile.Open(filepath.Join(t.TempDir(), "cache"), &shardfile.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c := &state.Cached{Local: bitcheck.New(d), Remote: r}
	if err := os.Truncate(filepath.Join(d.Path(), "3a"), 0); err != nil {
		t.Fatal(err)
	}
	seen := make([]bool, 2)
	err = c.Decide(ctx, []signature.Signature{0x01000000, 0x3a000001}, seen, false)
	if !errors.Is(err, shardfile.ErrFault) || !strings.Contains(err.Error(), "/3a") {
		t.Fatalf("%v, want ErrFault naming /3a", err)
	}
	if err := c.Decide(ctx, []signature.Signature{0x02000000, 0x02000000}, seen, false); err != nil || seen[0] || !seen[1] {
		t.Fatalf("other shard: %v %v", err, seen)
	}
}
