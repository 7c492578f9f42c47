package bloomlayout

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/redisstate"
	"github.com/urldedupd/urldedupd/internal/redistest"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// A URL read at a live leaf (its lease came back short) goes on to the
// leaf's child only if the leaf had split when its bits were read, never
// because the process learned of a split since: between the read and its
// answer, another writer may store the URL in the leaf (new) and split
// it, and another batch of this process may learn of that split first.
// Sending the URL down then would decide it new a second time in the
// child. This is the interleaving, made with two handles on one real
// redis-server and the round taken apart where the answers come back.
func TestTreeReadUsesTheFlagItRead(t *testing.T) {
	ctx := context.Background()
	addr := redistest.Server(t)
	k := signature.Key{7}
	asked := format.NewMeta(format.Spec{Layout: format.DSBF, Algorithm: signature.SipHash, Mode: signature.Safe}, time.Now())
	asked.Sizes.ShardBytes, asked.Filter, asked.Key = 4<<10, format.Filter{K: 7, Children: 2, FMax: 0.001}, &k
	open := func(create bool) *redisstate.Redis {
		r, err := redisstate.Open(ctx, addr, &redisstate.Options{Create: create, Spec: &asked.Spec, New: &asked})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	state, other := open(true), open(false)
	r, ok := state.Remote().(*redisTree)
	if !ok {
		t.Fatalf("a DSBF in Redis is decided by %T", state.Remote())
	}
	rng := rand.New(rand.NewPCG(3, 3))
	var sig signature.Signature
	for sig = signature.Signature(rng.Uint64()); r.tree.First(uint64(sig)) != 0; sig = signature.Signature(rng.Uint64()) {
	}
	const leaf = 0
	if _, can := r.tree.Limit(leaf); !can {
		t.Fatal("leaf 0 cannot split: no test")
	}

	// This process's round: the URL has no room (its last lease came back
	// short), so it is read, not sent.
	sc := &treeScratch{Batch: &layout.Batch{Sigs: []signature.Signature{sig}, Answers: make([]uint8, 1), Pending: []int{0}}}
	sc.slot = append(sc.slot[:0], leaf)
	sc.byLeaf[leaf] = append(sc.byLeaf[leaf][:0], 0)
	sc.short[leaf] = true
	ps := r.t.Pipes()
	c, err := r.leafCall(ctx, ps, sc, leaf, false)
	if err != nil || c.read == nil || c.sent != 0 {
		t.Fatalf("the round does not read the URL: sent %d, read %v, %v", c.sent, c.read != nil, err)
	}
	ps.Exec(ctx)

	// Before its answers are taken: another writer stores the URL (new),
	// the leaf splits, and another batch of this process learns of it.
	seen := []bool{true}
	if err := other.Decide(ctx, []signature.Signature{sig}, seen, false); err != nil || seen[0] {
		t.Fatalf("the other writer: seen %v, %v", seen[0], err)
	}
	if err := other.Client().BitField(ctx, r.keys[leaf], "SET", "u8", flagOffset, 1).Err(); err != nil {
		t.Fatal(err)
	}
	r.split[leaf].Store(true)

	next, _, err := r.leafAnswers(sc, c, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(next) != 1 || sc.slot[0] != leaf {
		t.Fatalf("read at a live leaf, the URL was sent on to leaf %d (pending %v): it would be new twice", sc.slot[0], next)
	}
	// The next round finds it where the other writer stored it.
	if err := state.Decide(ctx, []signature.Signature{sig}, seen, false); err != nil || !seen[0] {
		t.Fatalf("after the other writer stored it: seen %v, %v", seen[0], err)
	}
}
