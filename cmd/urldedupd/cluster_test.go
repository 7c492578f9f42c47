package main_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/redistest"
)

// redisCluster starts 6 redis-server processes in cluster mode on free
// loopback ports and joins them with redis-cli --cluster create into 3
// masters with one replica each. Every process is stopped by pid at the
// end. It returns the masters' addresses and a function that kills the
// server at an address (SIGKILL, by pid). Its node timeout is 20 s, so
// that a machine too busy to answer for a while does not start a failover
// (which, without --redis-replicas, can lose a master's last writes and
// answer their URLs new a second time: see docs/operations.md);
// redisClusterFailover's is 2 s, for tests of failovers.
func redisCluster(t *testing.T) (masters []string, kill func(addr string)) {
	t.Helper()
	return redisClusterTimeout(t, 20_000)
}

func redisClusterFailover(t *testing.T) (masters []string, kill func(addr string)) {
	t.Helper()
	return redisClusterTimeout(t, 2000)
}

func redisClusterTimeout(t *testing.T, nodeTimeoutMS int) (masters []string, kill func(addr string)) {
	t.Helper()
	c := redistest.StartCluster(t, time.Duration(nodeTimeoutMS)*time.Millisecond)
	return c.Masters, c.Kill
}

// Exactly once across 4 filter processes against a Redis Cluster of 3
// masters with replicas; the 256 keys spread over all three masters.
func TestRedisClusterExactlyOnce(t *testing.T) {
	t.Parallel()
	masters, _ := redisCluster(t)
	backend := "redis-cluster://" + strings.Join(masters, ",")
	if _, stderr, code := run(t, nil, "--backend", backend, "init"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	n := filterExactlyOnce(t, 100_000, 30_000, "--backend", backend)
	out, stderr, code := run(t, nil, "--backend", backend, "stats", "--json")
	if code != 0 || !strings.Contains(out, fmt.Sprintf(`"bits_set": %d,`, n)) {
		t.Fatalf("stats: %d %q", code, stderr)
	}
	// Every master holds some of the keys.
	for _, m := range masters {
		_, port, _ := net.SplitHostPort(m)
		keys, err := exec.Command("redis-cli", "-p", port, "--scan", "--pattern", "urldedupd:*").Output()
		if err != nil || strings.Count(string(keys), "\n") < 40 {
			t.Fatalf("master %s holds %d keys: %v", m, strings.Count(string(keys), "\n"), err)
		}
	}
	t.Logf("%d distinct signatures over a 3-master cluster, each printed once", n)
}

// Each master's view of the cluster flips between fail and ok all through
// a run of 4 filter processes: a goroutine per master deletes and adds
// back, every 5 ms, a slot of its own that no state key uses, so commands
// sent to it are refused CLUSTERDOWN at random points of a pipeline. Every
// URL must still be printed exactly once: a client that sends again the
// commands of a pipeline that had already run (as go-redis's cluster
// pipeline does on CLUSTERDOWN) makes a URL's second SETBIT answer "dup",
// and the URL is lost.
func TestRedisClusterStateFlapping(t *testing.T) {
	t.Parallel()
	masters, _ := redisCluster(t)
	backend := "redis-cluster://" + strings.Join(masters, ",")
	if _, stderr, code := run(t, nil, "--backend", backend, "init"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	stop := flapSlots(t, masters)
	n := filterExactlyOnce(t, 100_000, 30_000, "--backend", backend, "--redis-timeout", "60s")
	flips := stop()
	if flips < 10 {
		t.Fatalf("only %d slot flips during the run: the test did not test", flips)
	}
	t.Logf("%d distinct URLs printed once each through %d slot flips", n, flips)
}

// flapSlots starts, for each master, a loop that deletes one of its slots
// that no state key ("urldedupd:…") hashes to, waits 5 ms, adds it back
// and waits 5 ms, at most 100,000 times. stop ends the loops, leaves every
// slot assigned and returns how many deletions were made.
func flapSlots(t *testing.T, masters []string) (stop func() int) {
	t.Helper()
	ctx := context.Background()
	used := map[int64]bool{}
	c0 := redis.NewClient(&redis.Options{Addr: masters[0]})
	defer c0.Close()
	keys := []string{"urldedupd:meta"}
	for i := range 256 {
		keys = append(keys, fmt.Sprintf("urldedupd:%02x", i))
	}
	for _, k := range keys {
		slot, err := c0.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		used[slot] = true
	}
	var wg sync.WaitGroup
	var flips atomic.Int64
	done := make(chan struct{})
	for _, m := range masters {
		c := redis.NewClient(&redis.Options{Addr: m, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		slots, err := c.ClusterSlots(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		id, err := c.ClusterMyID(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		slot := int64(-1)
		for _, r := range slots {
			if len(r.Nodes) == 0 || r.Nodes[0].ID != id {
				continue
			}
			for s := int64(r.Start); s <= int64(r.End) && slot < 0; s++ {
				if !used[s] {
					slot = s
				}
			}
		}
		if slot < 0 {
			t.Fatalf("master %s: no slot free of state keys", m)
		}
		wg.Go(func() {
			for i := 0; i < 100_000; i++ {
				select {
				case <-done:
					return
				default:
				}
				if err := c.Do(ctx, "CLUSTER", "DELSLOTS", slot).Err(); err == nil {
					flips.Add(1)
				}
				time.Sleep(5 * time.Millisecond)
				for j := 0; j < 100 && c.Do(ctx, "CLUSTER", "ADDSLOTS", slot).Err() != nil; j++ {
					time.Sleep(10 * time.Millisecond) // must not be left unassigned
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	var once sync.Once
	stop = func() int {
		once.Do(func() { close(done); wg.Wait() })
		return int(flips.Load())
	}
	t.Cleanup(func() { stop() })
	return stop
}

// A master killed in the middle of a run, with its replica taking over:
// each of 4 filter processes either completes or fails loudly (exit 5,
// "redis unavailable"), and no URL is ever printed new twice. The filters
// run with --redis-replicas 1, so no answered bit can be lost in the
// failover.
func TestRedisClusterFailover(t *testing.T) {
	t.Parallel()
	masters, kill := redisClusterFailover(t)
	backend := "redis-cluster://" + strings.Join(masters, ",")
	if _, stderr, code := run(t, nil, "--backend", backend, "init"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	tmp := t.TempDir()
	const procs, n = 4, 400_000
	inputs := make([]string, procs)
	for p := range procs {
		inputs[p] = filepath.Join(tmp, fmt.Sprintf("in%d.txt", p))
		rng := rand.New(rand.NewPCG(uint64(p), 3))
		writeURLs(t, inputs[p], n, func(i int) int {
			if i%2 == 0 {
				return rng.IntN(100_000) // shared by all processes
			}
			return (p+1)*10_000_000 + i
		})
	}
	type result struct {
		out    []byte
		stderr string
		code   int
	}
	results := make([]result, procs)
	var wg sync.WaitGroup
	var lines atomic.Int64 // printed so far, by all
	for p := range procs {
		cmd := exec.Command(binary, "--backend", backend, "--redis-replicas", "1", "--redis-timeout", "15s", "filter", inputs[p])
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, _ := cmd.StdoutPipe()
		background(t, cmd)
		wg.Go(func() {
			var out bytes.Buffer
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				out.Write(sc.Bytes())
				out.WriteByte('\n')
				lines.Add(1)
			}
			err := cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				code = -1
			}
			results[p] = result{out.Bytes(), stderr.String(), code}
		})
	}
	// Kill a master once the run is well under way.
	for i := 0; lines.Load() < 50_000; i++ {
		if i == 600 {
			t.Fatalf("only %d lines printed within 60 s", lines.Load())
		}
		time.Sleep(100 * time.Millisecond)
	}
	kill(masters[1])
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("filters did not end within 3 minutes of the failover")
	}
	printed := map[uint32]int{}
	completed := 0
	for p, r := range results {
		switch {
		case r.code == 0:
			completed++
		case r.code == 5 && strings.Contains(r.stderr, "redis unavailable"):
			t.Logf("process %d failed loudly: %s", p, strings.TrimSpace(r.stderr))
		default:
			t.Fatalf("process %d: exit %d, stderr %q", p, r.code, r.stderr)
		}
		for _, l := range bytes.Split(bytes.TrimSuffix(r.out, []byte("\n")), []byte("\n")) {
			if len(l) > 0 {
				printed[crc32.ChecksumIEEE(l)]++
			}
		}
	}
	for sig, n := range printed {
		if n > 1 {
			t.Fatalf("signature %08x printed new %d times: silently wrong", sig, n)
		}
	}
	if completed == procs { // then every URL was printed, once
		want := map[uint32]bool{}
		for _, in := range inputs {
			data, _ := os.ReadFile(in)
			for _, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
				want[crc32.ChecksumIEEE(l)] = true
			}
		}
		if len(printed) != len(want) {
			t.Fatalf("all completed, but %d distinct URLs printed of %d", len(printed), len(want))
		}
	}
	t.Logf("%d of %d processes completed across the failover; %d URLs printed, none twice", completed, procs, len(printed))
}
