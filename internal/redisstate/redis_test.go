package redisstate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	_ "github.com/urldedupd/urldedupd/internal/bitcheck" // the layout these tests keep in Redis
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/redisstate"
	"github.com/urldedupd/urldedupd/internal/redistest"
	"github.com/urldedupd/urldedupd/internal/signature"
)

var (
	server   = redistest.Server
	serverOn = redistest.ServerOn
	freePort = redistest.FreePort
)

func TestDecideInOrder(t *testing.T) {
	ctx := context.Background()
	r, err := redisstate.Open(ctx, server(t), &redisstate.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sigs := []signature.Signature{1, 2, 1, 0xffffffff, 2, 3}
	seen := make([]bool, len(sigs))
	if err := r.Decide(ctx, sigs, seen, true); err != nil || fmt.Sprint(seen) != "[false false false false false false]" {
		t.Fatalf("dry run: %v %v", seen, err)
	}
	if err := r.Decide(ctx, sigs, seen, false); err != nil || fmt.Sprint(seen) != "[false false true false true false]" {
		t.Fatalf("first: %v %v", seen, err)
	}
	if err := r.Decide(ctx, sigs, seen, false); err != nil || fmt.Sprint(seen) != "[true true true true true true]" {
		t.Fatalf("again: %v %v", seen, err)
	}
	f, err := r.Report(ctx, "test")
	if err != nil || *f.BitsSet != 4 || f.Shards[0] != 3 || f.Shards[0xff] != 1 {
		t.Fatalf("fill %v (shards %v), %v", f.BitsSet, f.Shards, err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	addr := server(t)
	if _, err := redisstate.Open(ctx, addr, nil); !errors.Is(err, format.ErrNoState) {
		t.Fatalf("no metadata, no Create: %v", err)
	}
	if _, err := redisstate.Open(ctx, "http://x", nil); !errors.Is(err, redisstate.ErrBadURL) {
		t.Fatalf("bad address: %v", err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := l.Addr().String()
	l.Close()
	start := time.Now()
	if _, err := redisstate.Open(ctx, "redis://"+dead+"/0", &redisstate.Options{Attempts: 3}); !errors.Is(err, redisstate.ErrUnavailable) {
		t.Fatalf("nothing listening: %v", err)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Fatal("gave up without backing off")
	}
}

// A batch sent while the server is down is sent again, once the server is
// back: no connection was made, so nothing of it ran.
func TestDecideRetriesUntilServerIsBack(t *testing.T) {
	ctx := context.Background()
	port := freePort(t)
	addr, kill := serverOn(t, port)
	r, err := redisstate.Open(ctx, addr, &redisstate.Options{Create: true, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sigs := []signature.Signature{7, 8, 7}
	seen := make([]bool, 3)
	if err := r.Decide(ctx, sigs, seen, false); err != nil {
		t.Fatal(err)
	}
	kill()
	back := make(chan struct{})
	go func() {
		defer close(back)
		time.Sleep(700 * time.Millisecond)
		serverOn(t, port)
	}()
	start := time.Now()
	sigs = []signature.Signature{9, 10, 9}
	err = r.Decide(ctx, sigs, seen, false)
	<-back
	if err != nil {
		t.Fatalf("batch while the server was down: %v", err)
	}
	if time.Since(start) < 500*time.Millisecond || fmt.Sprint(seen) != "[false false true]" {
		t.Fatalf("answers %v after %v; want [false false true] after the restart", seen, time.Since(start))
	}
}

// With Replicas, a batch that the replicas do not acknowledge fails.
func TestDecideWaitsForReplicas(t *testing.T) {
	ctx := context.Background()
	master := server(t)
	mport := strings.TrimSuffix(strings.TrimPrefix(master, "redis://127.0.0.1:"), "/0")
	server(t, "--replicaof", "127.0.0.1", mport)
	r, err := redisstate.Open(ctx, master, &redisstate.Options{Create: true, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen := make([]bool, 2)
	deadline := time.Now().Add(10 * time.Second)
	for err = r.Decide(ctx, []signature.Signature{1, 2}, seen, false); err != nil; err = r.Decide(ctx, []signature.Signature{1, 2}, seen, false) {
		if time.Now().After(deadline) { // the replica may still be syncing
			t.Fatalf("one replica: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r2, err := redisstate.Open(ctx, master, &redisstate.Options{Replicas: 2, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	err = r2.Decide(ctx, []signature.Signature{3}, seen[:1], false)
	if !errors.Is(err, redisstate.ErrUnavailable) || !strings.Contains(err.Error(), "of 2 replicas acknowledged") {
		t.Fatalf("two replicas asked, one there: %v", err)
	}
}

// BenchmarkDecide: URLs/s through one local Redis by batch size, on a
// bitmap that fills as it goes (mostly new bits).
func BenchmarkDecide(b *testing.B) {
	ctx := context.Background()
	r, err := redisstate.Open(ctx, server(b), &redisstate.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, size := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			sigs := make([]signature.Signature, size)
			seen := make([]bool, size)
			n := 0
			for b.Loop() {
				for i := range sigs {
					sigs[i] = signature.Signature(rng.Uint32())
				}
				if err := r.Decide(ctx, sigs, seen, false); err != nil {
					b.Fatal(err)
				}
				n += size
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "URLs/s")
		})
	}
}
