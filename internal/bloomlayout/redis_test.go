package bloomlayout

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/redisstate"
	"github.com/urldedupd/urldedupd/internal/redistest"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// A DSBF leaf one URL short of its bound, sent a batch of URLs it holds
// already: each round may send it only as many URLs as its bound has room
// for (one), and none of them is stored, so the batch takes a round a URL
// — more than the tree's depth allows for — and is still decided, all of
// it duplicates; then a new URL splits the leaf.
func TestTreeLeafAtItsBound(t *testing.T) {
	ctx := context.Background()
	k := signature.Key{9}
	asked := format.NewMeta(format.Spec{Layout: format.DSBF, Algorithm: signature.SipHash, Mode: signature.Safe}, time.Now())
	asked.Sizes.ShardBytes, asked.Filter, asked.Key = 4<<10, format.Filter{K: 7, Children: 2, FMax: 0.001}, &k
	r, err := redisstate.Open(ctx, redistest.Server(t), &redisstate.Options{Create: true, Spec: &asked.Spec, New: &asked})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tree := NewTree(r.Meta())
	limit, _ := tree.Limit(0)
	if limit < 100 {
		t.Fatalf("leaf 0's bound is %d URLs: too few for this test", limit)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	leaf0 := func() signature.Signature {
		for {
			if s := signature.Signature(rng.Uint64()); tree.First(uint64(s)) == 0 {
				return s
			}
		}
	}
	// URLs of leaf 0 until it stores limit − 1 (a few are false duplicates
	// as it fills, and not stored).
	var held []signature.Signature
	seen := make([]bool, limit)
	for stored := uint64(0); stored < limit-1; {
		batch := make([]signature.Signature, limit-1-stored)
		for i := range batch {
			batch[i] = leaf0()
		}
		if err := r.Decide(ctx, batch, seen[:len(batch)], false); err != nil {
			t.Fatal(err)
		}
		for _, s := range seen[:len(batch)] {
			if !s {
				stored++
			}
		}
		held = append(held, batch...)
	}
	seen = make([]bool, len(held))
	if err := r.Decide(ctx, held, seen, false); err != nil {
		t.Fatalf("a batch of %d duplicates at a leaf one short of its bound: %v", len(held), err)
	}
	for i, s := range seen {
		if !s {
			t.Fatalf("URL %d stored, then new again", i)
		}
	}
	for seen[0] = true; seen[0]; { // a URL new to the leaf (not a false duplicate)
		if err := r.Decide(ctx, []signature.Signature{leaf0()}, seen[:1], false); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := r.Remote().(*redisTree).treeReport(ctx)
	if err != nil || rep.Leaves != 4 || rep.Distinct != float64(limit) {
		t.Fatalf("after the bound: %d leaves, %v URLs (want 4, %d): %v", rep.Leaves, rep.Distinct, limit, err)
	}
}
