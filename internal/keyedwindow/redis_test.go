package keyedwindow_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/keyedwindow"
	"github.com/urldedupd/urldedupd/internal/redistest"
	"github.com/urldedupd/urldedupd/internal/window"
)

func client(t *testing.T) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(redistest.Server(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// The script on a real redis-server and the table in memory, given the
// same operations at the same instants (decisions, dry runs and forgets,
// generations crossed one at a time and by pauses of up to 80), answer
// the same and leave the same bytes, header and slots, in every shard.
func TestRedisSameAsTable(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	for _, cfg := range []struct {
		pol    window.Policy
		area   int64
		shards uint64
	}{
		{window.FirstSeen, keyed.MinTableShardBytes, 4}, // 2 buckets a shard on 4 shards: full pairs
		{window.LastSeen, keyed.MinTableShardBytes, 4},
		{window.FirstSeen, keyed.MinTableShardBytes * 8, 8}, // 16 buckets on 8: sparse, swept slots stay dead
		{window.LastSeen, keyed.MinTableShardBytes * 8, 8},
	} {
		pol := cfg.pol
		spec := window.Spec{Epoch: epoch, Window: 3 * time.Second, Generations: 3, Policy: pol}
		area := cfg.area
		mem := keyedwindow.MemoryShards(area)
		var clk clock
		tab, err := keyedwindow.NewTable(spec, mem, new(window.MemoryLocker), keyedwindow.Options{Clock: clk.now})
		if err != nil {
			t.Fatal(err)
		}
		geo := tab.Geometry()
		cmds := keyedwindow.NewCommands(spec, geo, clk.now)
		if err := keyedwindow.LoadScript(ctx, c); err != nil {
			t.Fatal(err)
		}
		prefix := fmt.Sprintf("w%s%d", pol, area)
		key := func(l keyed.Loc) string { return fmt.Sprintf("%s:%02x", prefix, l.Shard) }
		rng := rand.New(rand.NewPCG(uint64(pol), 5))
		locs := make([]keyed.Loc, 3000)
		for i := range locs { // on a few shards, so that pairs fill or sweeps find expired slots
			locs[i] = geo.Locate(rng.Uint64()&^(0xff<<56) | uint64(i)%cfg.shards<<56)
		}
		pauses := []int{2, 5, 20, 61, 62, 63, 64, 65, 66, 127, 128, 130}
		counts := map[string]int{}
		for step := range 6000 {
			if step%100 == 99 {
				if rng.IntN(6) == 0 { // pauses around the tags' period, where a tag repeats
					clk.add(time.Duration(pauses[rng.IntN(len(pauses))]) * time.Second)
				} else {
					clk.add(time.Second)
				}
			}
			l := locs[rng.IntN(len(locs))]
			op := keyedwindow.Decide
			switch r := rng.IntN(10); {
			case r == 0:
				op = keyedwindow.Check
			case r == 1:
				op = keyedwindow.Forget
			}
			pipe := c.Pipeline()
			cmd := cmds.Eval(ctx, pipe, key(l), l, op)
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			v, err := cmd.Int64()
			if err != nil {
				t.Fatal(err)
			}
			got, _ := keyedwindow.Answer(v)
			var want int64
			switch op {
			case keyedwindow.Decide:
				res := make([]window.Result, 1)
				if err := tab.DecideBatch([]keyed.Loc{l}, res, nil); err != nil {
					t.Fatal(err)
				}
				want = int64(res[0])
				counts[res[0].String()]++
			case keyedwindow.Check:
				seen := make([]bool, 1)
				tab.Check([]keyed.Loc{l}, seen)
				if seen[0] {
					want = 1
				}
			case keyedwindow.Forget:
				was := make([]bool, 1)
				if err := tab.Forget([]keyed.Loc{l}, was); err != nil {
					t.Fatal(err)
				}
				if was[0] {
					want = 1
				}
			}
			if got != want {
				t.Fatalf("%v step %d %c at gen %d: redis %d, table %d", pol, step, op, spec.Gen(clk.now()), got, want)
			}
		}
		for i := range keyed.Shards {
			val, err := c.Get(ctx, fmt.Sprintf("%s:%02x", prefix, i)).Bytes()
			if err != nil && err != redis.Nil {
				t.Fatal(err)
			}
			if len(val) > len(mem[i]) || !bytes.Equal(val, mem[i][:len(val)]) || strings.Trim(string(mem[i][len(val):]), "\x00") != "" {
				t.Fatalf("%v shard %02x: the key (%d bytes) is not the table's shard", pol, i, len(val))
			}
		}
		t.Logf("%v: %v", pol, counts)
		if counts["new"] == 0 || counts["dup"] == 0 || (counts["full"] == 0 && area == keyed.MinTableShardBytes) {
			t.Fatalf("%v: %v: the test did not reach every answer", pol, counts)
		}
	}
}

// Four clients decide overlapping inputs through the script, on one
// redis-server and on a 3-master Redis Cluster, with a shared clock moved
// on by two generations every 8th batch: every URL is new exactly when the
// policy says, counted both ways.
func TestRedisExactlyOncePerWindow(t *testing.T) {
	single := func(t *testing.T) redis.UniversalClient { return client(t) }
	cluster := func(t *testing.T) redis.UniversalClient {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: redistest.StartCluster(t, 5*time.Second).Masters, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		return c
	}
	for name, open := range map[string]func(*testing.T) redis.UniversalClient{"server": single, "cluster": cluster} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := open(t)
			for _, pol := range []window.Policy{window.FirstSeen, window.LastSeen} {
				spec := procSpec(pol)
				geo, _ := keyed.NewGeometry(procArea)
				var clk clock
				if err := keyedwindow.LoadScript(ctx, c); err != nil {
					t.Fatal(err)
				}
				prefix := fmt.Sprintf("x%s%s", name, pol)
				const procs = 4
				logs := make([][]decision, procs)
				var done atomic.Int64
				var wg sync.WaitGroup
				for p := range procs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						cmds := keyedwindow.NewCommands(spec, geo, clk.now)
						rng := rand.New(rand.NewPCG(uint64(p), 1))
						for range procBatches {
							ids := make([]int, procBatch)
							res := make([]*redis.Cmd, procBatch)
							pipe := c.Pipeline()
							for i := range ids {
								ids[i] = rng.IntN(procURLs/2) + (procURLs/2)*(i%2)
								l := geo.Locate(rand.New(rand.NewPCG(uint64(ids[i]), 7)).Uint64())
								res[i] = cmds.Eval(ctx, pipe, fmt.Sprintf("%s:%02x", prefix, l.Shard), l, keyedwindow.Decide)
							}
							if _, err := pipe.Exec(ctx); err != nil {
								t.Error(err)
								return
							}
							for i, cmd := range res {
								v, err := cmd.Int64()
								if err != nil {
									t.Error(err)
									return
								}
								a, gen := keyedwindow.Answer(v)
								logs[p] = append(logs[p], decision{ids[i], gen, window.Result(a)})
							}
							if n := done.Add(1); n%8 == 0 {
								clk.add(2 * time.Second)
							}
						}
					}()
				}
				wg.Wait()
				if t.Failed() {
					t.FailNow()
				}
				byURL := map[int][]decision{}
				for _, l := range logs {
					for _, d := range l {
						byURL[d.url] = append(byURL[d.url], d)
					}
				}
				var twice, lost int
				for _, ds := range byURL {
					twice += countTwice(ds, procG, pol)
					lost += countLost(ds, procG, pol)
				}
				t.Logf("%v: %d URLs; %d new twice within a window, %d lost", pol, len(byURL), twice, lost)
				if twice+lost > 0 {
					t.Fatalf("%v: %d URLs new twice within a window, %d lost", pol, twice, lost)
				}
			}
		})
	}
}
