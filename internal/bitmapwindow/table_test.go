package bitmapwindow_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/bitmapwindow"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/racetest"
	"github.com/urldedupd/urldedupd/internal/redistest"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/window"
)

var epoch = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time      { return epoch.Add(time.Duration(c.ns.Load())) }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }

const G = 3

func spec(pol window.Policy) window.Spec {
	return window.Spec{Epoch: epoch, Window: G * time.Second, Generations: G, Policy: pol}
}

// sigOf gives URL u a signature on one of 4 shards (tests touch 4 of the
// 256 shards' rings: 8 MiB each).
func sigOf(u int) signature.Signature {
	return signature.Signature(uint32(u%4)<<24 | uint32(rand.New(rand.NewPCG(uint64(u), 3)).Uint32()&(signature.BitsPerShard-1)))
}

type decision struct {
	url  int
	gen  int64
	seen bool
}

// countErrors counts, for one URL's decisions (in no order within a
// generation: they come from several deciders), News within a window of
// another New, or under last-seen of a sighting of an earlier generation
// (twice), and Dups with no sighting that holds them (lost). Bits are
// shared by signatures, so URLs are chosen with distinct signatures.
func countErrors(ds []decision, pol window.Policy) (twice, lost int) {
	for i, a := range ds {
		bad := false
		for j, b := range ds {
			if j == i || b.gen > a.gen || a.gen-b.gen >= G {
				continue
			}
			if a.seen {
				bad = bad || !b.seen || pol == window.LastSeen
			} else {
				bad = bad || !b.seen || (pol == window.LastSeen && b.gen < a.gen)
			}
		}
		switch {
		case !a.seen && bad:
			twice++
		case a.seen && !bad:
			lost++
		}
	}
	return twice, lost
}

// urls returns n URL ids with distinct signatures.
func urls(n int) []int {
	var ids []int
	seen := map[signature.Signature]bool{}
	for u := 0; len(ids) < n; u++ {
		if s := sigOf(u); !seen[s] {
			seen[s] = true
			ids = append(ids, u)
		}
	}
	return ids
}

// Serially, against the exact answers, over 300 generations with pauses of
// up to 10: a dry run before each decision and the decision itself answer
// as the policy says.
func TestDecideAgainstReference(t *testing.T) {
	for _, pol := range []window.Policy{window.FirstSeen, window.LastSeen} {
		var clk clock
		tab, err := bitmapwindow.NewTable(spec(pol), bitmapwindow.MemoryShards(G), new(window.MemoryLocker), bitmapwindow.Options{Clock: clk.now})
		if err != nil {
			t.Fatal(err)
		}
		ids := urls(300)
		rng := rand.New(rand.NewPCG(4, uint64(pol)))
		stamp := map[int]int64{}
		news := 0
		seen := make([]bool, 1)
		for step := range 6000 {
			if step%20 == 19 {
				clk.add(time.Duration(1+rng.IntN(3)*rng.IntN(4)) * time.Second)
			}
			u := ids[rng.IntN(len(ids))]
			cur := spec(pol).Gen(clk.now())
			s, ok := stamp[u]
			want := ok && cur-s < G
			sig := []signature.Signature{sigOf(u)}
			tab.Check(sig, seen)
			if seen[0] != want {
				t.Fatalf("%v step %d: dry run %v, want %v (stamped %d, now %d)", pol, step, seen[0], want, s, cur)
			}
			if err := tab.DecideBatch(sig, seen, nil); err != nil {
				t.Fatal(err)
			}
			if seen[0] != want {
				t.Fatalf("%v step %d: %v, want %v (stamped %d, now %d)", pol, step, seen[0], want, s, cur)
			}
			if !want || pol == window.LastSeen {
				stamp[u] = cur
			}
			if !want {
				news++
			}
		}
		if news < 100 || news > 5900 {
			t.Fatalf("%v: %d new of 6000", pol, news)
		}
	}
}

// decideMany runs 4 deciders at once (each its own decide func), with the
// clock moved on every 8th batch, and counts errors.
func decideMany(t *testing.T, pol window.Policy, clk *clock, decide func(p int) func([]int) ([]bool, []int64, error)) {
	t.Helper()
	ids := urls(2000)
	const procs, batch = 4, 100
	batches := 32
	if racetest.Enabled {
		batches = 16 // still 8 moves of the clock
	}
	logs := make([][]decision, procs)
	var done atomic.Int64
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := decide(p)
			rng := rand.New(rand.NewPCG(uint64(p), 1))
			us := make([]int, batch)
			for range batches {
				for i := range us {
					us[i] = ids[rng.IntN(len(ids)/2)+(len(ids)/2)*(i%2)]
				}
				seen, gens, err := d(us)
				if err != nil {
					t.Error(err)
					return
				}
				for i := range us {
					logs[p] = append(logs[p], decision{us[i], gens[i], seen[i]})
				}
				if n := done.Add(1); n%8 == 0 {
					clk.add(time.Duration(1+n%3) * time.Second)
				}
			}
		}()
	}
	wg.Wait()
	byURL := map[int][]decision{}
	for _, l := range logs {
		for _, d := range l {
			byURL[d.url] = append(byURL[d.url], d)
		}
	}
	var twice, lost int
	for _, ds := range byURL {
		a, b := countErrors(ds, pol)
		twice, lost = twice+a, lost+b
	}
	t.Logf("%v: %d URLs; %d new twice within a window, %d lost", pol, len(byURL), twice, lost)
	if twice+lost > 0 {
		t.Fatalf("%v: %d URLs new twice within a window, %d lost", pol, twice, lost)
	}
}

// Four tables over one memory, at once, across boundaries: exactly once
// per window, counted both ways.
func TestExactlyOncePerWindow(t *testing.T) {
	for _, pol := range []window.Policy{window.FirstSeen, window.LastSeen} {
		mem, lock := bitmapwindow.MemoryShards(G), new(window.MemoryLocker)
		var clk clock
		decideMany(t, pol, &clk, func(int) func([]int) ([]bool, []int64, error) {
			tab, err := bitmapwindow.NewTable(spec(pol), mem, lock, bitmapwindow.Options{Clock: clk.now})
			if err != nil {
				t.Fatal(err)
			}
			return func(us []int) ([]bool, []int64, error) {
				sigs := make([]signature.Signature, len(us))
				for i, u := range us {
					sigs[i] = sigOf(u)
				}
				seen, gens := make([]bool, len(us)), make([]int64, len(us))
				return seen, gens, tab.DecideBatch(sigs, seen, gens)
			}
		})
	}
}

func redisClient(t *testing.T) *redis.Client {
	o, err := redis.ParseURL(redistest.Server(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// The script on a real redis-server answers as the table does and leaves
// each shard key byte for byte the table's shard; four clients at once on a
// server and on a 3-master Redis Cluster are exactly once per window.
func TestRedis(t *testing.T) {
	ctx := context.Background()
	c := redisClient(t)
	if err := bitmapwindow.LoadScript(ctx, c); err != nil {
		t.Fatal(err)
	}
	for _, pol := range []window.Policy{window.FirstSeen, window.LastSeen} {
		var clk clock
		mem := bitmapwindow.MemoryShards(G)
		tab, err := bitmapwindow.NewTable(spec(pol), mem, new(window.MemoryLocker), bitmapwindow.Options{Clock: clk.now})
		if err != nil {
			t.Fatal(err)
		}
		cmds := bitmapwindow.NewCommands(spec(pol), clk.now)
		prefix := "b" + pol.String()
		rng := rand.New(rand.NewPCG(9, uint64(pol)))
		ids := urls(400)
		seen := make([]bool, 1)
		steps := 1500
		if racetest.Enabled {
			steps = 500
		}
		for step := range steps {
			if step%25 == 24 {
				clk.add(time.Duration(1+rng.IntN(4)) * time.Second)
			}
			sig := sigOf(ids[rng.IntN(len(ids))])
			mode := bitmapwindow.Decide
			if rng.IntN(5) == 0 {
				mode = bitmapwindow.Check
			}
			pipe := c.Pipeline()
			cmd := cmds.Eval(ctx, pipe, fmt.Sprintf("%s:%02x", prefix, sig.Shard()), sig, mode)
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			v, _ := cmd.Int64()
			got, _ := bitmapwindow.Answer(v)
			if mode == bitmapwindow.Check {
				tab.Check([]signature.Signature{sig}, seen)
			} else if err := tab.DecideBatch([]signature.Signature{sig}, seen, nil); err != nil {
				t.Fatal(err)
			}
			if (got == 1) != seen[0] {
				t.Fatalf("%v step %d %c: redis %d, table %v", pol, step, mode, got, seen[0])
			}
		}
		for i := range 4 {
			val, err := c.Get(ctx, fmt.Sprintf("%s:%02x", prefix, i)).Bytes()
			if err != nil {
				t.Fatal(err)
			}
			if len(val) > len(mem[i]) || !bytes.Equal(val, mem[i][:len(val)]) || strings.Trim(string(mem[i][len(val):]), "\x00") != "" {
				t.Fatalf("%v shard %02x: the key (%d bytes) is not the table's shard", pol, i, len(val))
			}
		}
	}
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: redistest.StartCluster(t, 5*time.Second).Masters, MaxRetries: -1})
	t.Cleanup(func() { cluster.Close() })
	for name, cl := range map[string]redis.UniversalClient{"server": c, "cluster": cluster} {
		if err := bitmapwindow.LoadScript(ctx, cl); err != nil {
			t.Fatal(err)
		}
		for _, pol := range []window.Policy{window.FirstSeen, window.LastSeen} {
			var clk clock
			prefix := "m" + name + pol.String()
			decideMany(t, pol, &clk, func(int) func([]int) ([]bool, []int64, error) {
				cmds := bitmapwindow.NewCommands(spec(pol), clk.now)
				return func(us []int) ([]bool, []int64, error) {
					pipe := cl.Pipeline()
					res := make([]*redis.Cmd, len(us))
					for i, u := range us {
						res[i] = cmds.Eval(ctx, pipe, fmt.Sprintf("%s:%02x", prefix, sigOf(u).Shard()), sigOf(u), bitmapwindow.Decide)
					}
					if _, err := pipe.Exec(ctx); err != nil {
						return nil, nil, err
					}
					seen, gens := make([]bool, len(us)), make([]int64, len(us))
					for i, r := range res {
						v, err := r.Int64()
						if err != nil {
							return nil, nil, err
						}
						a, g := bitmapwindow.Answer(v)
						seen[i], gens[i] = a == 1, g
					}
					return seen, gens, nil
				}
			})
		}
	}
}

// Report counts bits by generation, and their union once; the
// false-duplicate chance follows. Under first-seen a URL is held in one
// generation; under last-seen a re-sighting stamps it again, so a URL can
// be held in two, and the union counts it once where the generations'
// sum counts it twice.
func TestReport(t *testing.T) {
	racetest.SkipSequential(t)
	for _, tc := range []struct {
		pol     window.Policy
		bitsSet string
		union   uint64
	}{
		// ids 100..299 at generation 1, 200..499 at 2, 300..699 at 3
		{window.FirstSeen, "[200 200 200]", 600},
		{window.LastSeen, "[400 300 200]", 600},
	} {
		var clk clock
		tab, err := bitmapwindow.NewTable(spec(tc.pol), bitmapwindow.MemoryShards(G), new(window.MemoryLocker), bitmapwindow.Options{Clock: clk.now})
		if err != nil {
			t.Fatal(err)
		}
		ids := urls(1000)
		for g, n := range []int{100, 200, 300, 400} {
			sigs := make([]signature.Signature, n)
			for i := range sigs {
				sigs[i] = sigOf(ids[g*100+i]) // overlapping: gen 2 sees 200..299 again, gen 3 300..499
			}
			if err := tab.DecideBatch(sigs, make([]bool, n), nil); err != nil {
				t.Fatal(err)
			}
			clk.add(time.Second)
		}
		clk.add(-time.Second)
		r := tab.Report()
		if r.Generation != 3 || fmt.Sprint(r.BitsSet) != tc.bitsSet || r.Union != tc.union || r.FalseDup <= 0 || r.FalseDup > 1e-5 {
			t.Fatalf("%s: report %+v, want bits set %s, union %d", tc.pol, r, tc.bitsSet, tc.union)
		}
		lr := bitmapwindow.LayoutReport("test", format.Meta{Window: spec(tc.pol)}, r)
		if lr.EstimatedDistinct == nil || math.Abs(*lr.EstimatedDistinct-float64(tc.union)) > 1 {
			t.Fatalf("%s: estimated distinct %v, want about %d", tc.pol, lr.EstimatedDistinct, tc.union)
		}
	}
}
