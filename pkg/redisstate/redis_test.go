package redisstate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/pkg/redisstate"
	"github.com/urldedupd/urldedupd/pkg/shardfile"
	"github.com/urldedupd/urldedupd/pkg/signature"
)

// server starts a real redis-server on a free loopback port and stops it,
// by pid, when the test or benchmark ends.
func server(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", fmt.Sprint(port), "--save", "",
		"--appendonly", "no", "--dir", tb.TempDir())
	if err := cmd.Start(); err != nil {
		tb.Fatal("redis-server (make test installs it): ", err)
	}
	tb.Cleanup(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	for i := 0; ; i++ {
		if out, _ := exec.Command("redis-cli", "-p", fmt.Sprint(port), "ping").Output(); strings.TrimSpace(string(out)) == "PONG" {
			break
		}
		if i == 100 {
			tb.Fatal("redis-server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Sprintf("redis://127.0.0.1:%d/0", port)
}

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
	f, err := r.Fill(ctx)
	if err != nil || f.Total() != 4 || f.Shard[0] != 3 || f.Shard[0xff] != 1 {
		t.Fatalf("fill %d (shard 00 %d), %v", f.Total(), f.Shard[0], err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	addr := server(t)
	if _, err := redisstate.Open(ctx, addr, nil); !errors.Is(err, shardfile.ErrNoState) {
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
