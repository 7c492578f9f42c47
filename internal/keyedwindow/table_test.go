package keyedwindow_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/keyedwindow"
	"github.com/urldedupd/urldedupd/internal/window"
)

var epoch = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// clock is a test clock shared by every "process".
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time      { return epoch.Add(time.Duration(c.ns.Load())) }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }
func (c *clock) set(d time.Duration) { c.ns.Store(int64(d)) }

type decision struct {
	url int
	gen int64
	res window.Result
}

// Four deciders (tables of their own over one memory) decide overlapping
// inputs while the clock crosses 5 generation boundaries (and one pause of
// 70 generations); under each policy every URL is new exactly when the
// policy says, counted both ways: a URL answered new twice within a
// window, and a URL answered duplicate with no sighting in the window
// before it (lost). The deciders share one lock in memory; or one lock
// file opened once, as the goroutines of one process do (serve's
// connections); or a lock file opened by each, as processes do.
func TestExactlyOncePerWindow(t *testing.T) {
	lockers := []struct {
		name string
		new  func(t *testing.T) func() window.Locker
	}{
		{"memory", func(*testing.T) func() window.Locker {
			l := new(window.MemoryLocker)
			return func() window.Locker { return l }
		}},
		{"one-file-open", func(t *testing.T) func() window.Locker {
			l := openLocker(t, t.TempDir()+"/lock")
			return func() window.Locker { return l }
		}},
		{"file-open-each", func(t *testing.T) func() window.Locker {
			path := t.TempDir() + "/lock"
			return func() window.Locker { return openLocker(t, path) }
		}},
	}
	for _, lk := range lockers {
		for _, pol := range []window.Policy{window.FirstSeen, window.LastSeen} {
			t.Run(lk.name+"/"+pol.String(), func(t *testing.T) {
				exactlyOncePerWindow(t, pol, lk.new(t))
			})
		}
	}
}

func openLocker(t *testing.T, path string) *window.FileLocker {
	l, err := window.OpenFileLocker(path, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func exactlyOncePerWindow(t *testing.T, pol window.Policy, locker func() window.Locker) {
	{
		{
			const G = 3
			spec := window.Spec{Epoch: epoch, Window: 3 * time.Second, Generations: G, Policy: pol}
			area := int64(keyed.MinTableShardBytes * 8)
			mem := keyedwindow.MemoryShards(area)
			var clk clock
			geo, _ := keyed.NewGeometry(area)
			const urls = 3000
			locOf := func(u int) keyed.Loc {
				r := rand.New(rand.NewPCG(uint64(u), 7))
				return geo.Locate(r.Uint64())
			}
			// Every 8th batch (of 96) moves the clock on a generation, the
			// sixth time by 70: boundaries fall while the others decide.
			const procs, batches, batch = 4, 24, 200
			logs := make([][]decision, procs)
			var done atomic.Int64
			var wg sync.WaitGroup
			for p := range procs {
				tab, err := keyedwindow.NewTable(spec, mem, locker(), keyedwindow.Options{Clock: clk.now})
				if err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(p), 1))
					locs, res, gens, ids := make([]keyed.Loc, batch), make([]window.Result, batch), make([]int64, batch), make([]int, batch)
					for range batches {
						for i := range batch {
							ids[i] = rng.IntN(urls/2) + (urls/2)*(i%2) // half shared, half spread
							locs[i] = locOf(ids[i])
						}
						if err := tab.DecideBatch(locs, res, gens); err != nil {
							t.Error(err)
							return
						}
						for i := range batch {
							logs[p] = append(logs[p], decision{ids[i], gens[i], res[i]})
						}
						if n := done.Add(1); n%8 == 0 {
							if n == 48 {
								clk.add(70 * time.Second)
							} else {
								clk.add(time.Second)
							}
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
			var twice, lost, news, full int
			for u, ds := range byURL {
				for _, d := range ds {
					if d.res == window.Full {
						full++
					}
				}
				twice += countTwice(ds, G, pol)
				lost += countLost(ds, G, pol)
				for _, d := range ds {
					if d.res == window.New {
						news++
					}
				}
				_ = u
			}
			t.Logf("%d URLs decided %d times: %d new, %d full; %d new twice within a window, %d lost",
				len(byURL), procs*batches*batch, news, full, twice, lost)
			if twice+lost+full > 0 {
				t.Fatalf("%d URLs new twice within a window, %d lost, %d not stored", twice, lost, full)
			}
			gensSeen := map[int64]bool{}
			for _, l := range logs {
				for _, d := range l {
					gensSeen[d.gen] = true
				}
			}
			if len(gensSeen) < 4 {
				t.Fatalf("decisions in %d generations: the test did not cross boundaries", len(gensSeen))
			}
		}
	}
}

// countTwice counts the URL's News that fall within a window of another
// New (same generation included), or, under last-seen, of any sighting in
// an earlier generation.
func countTwice(ds []decision, g int64, pol window.Policy) int {
	n := 0
	for i, a := range ds {
		if a.res != window.New {
			continue
		}
		for j, b := range ds {
			if i == j || b.gen > a.gen || a.gen-b.gen >= g {
				continue
			}
			if (b.res == window.New && (b.gen < a.gen || j < i)) || (pol == window.LastSeen && b.gen < a.gen) {
				n++
				break
			}
		}
	}
	return n
}

// countLost counts the URL's duplicates with nothing in the window before
// them that holds it: a New (first-seen), or any sighting (last-seen).
func countLost(ds []decision, g int64, pol window.Policy) int {
	n := 0
	for _, a := range ds {
		if a.res != window.Dup {
			continue
		}
		held := false
		for _, b := range ds {
			if (b.res == window.New || pol == window.LastSeen) && b.gen <= a.gen && a.gen-b.gen < g && b != a {
				held = true
				break
			}
		}
		if !held {
			n++
		}
	}
	return n
}

// Deciding allocates nothing per URL.
func TestDecideBatchAllocs(t *testing.T) {
	spec := window.Spec{Epoch: epoch, Window: 6 * time.Second, Generations: 6, Policy: window.LastSeen}
	area := int64(keyed.MinTableShardBytes * 64)
	tab, err := keyedwindow.NewTable(spec, keyedwindow.MemoryShards(area), new(window.MemoryLocker), keyedwindow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	geo := tab.Geometry()
	locs, res := make([]keyed.Loc, 1024), make([]window.Result, 1024)
	for i := range locs {
		locs[i] = geo.Locate(rand.Uint64())
	}
	if a := testing.AllocsPerRun(20, func() {
		if err := tab.DecideBatch(locs, res, nil); err != nil {
			t.Fatal(err)
		}
	}); a > 0 {
		t.Fatalf("%v allocations a batch", a)
	}
}

func TestNewTableErrors(t *testing.T) {
	spec := window.Spec{Epoch: epoch, Window: 6 * time.Second, Generations: 6, Policy: window.LastSeen}
	area := int64(keyed.MinTableShardBytes)
	good := keyedwindow.MemoryShards(area)
	for _, tt := range []struct {
		name   string
		shards [][]byte
	}{
		{"too few shards", good[:255]},
		{"not a power of two", keyedwindow.MemoryShards(area + 64)},
		{"a shard of another size", append(append([][]byte{}, good[:255]...), make([]byte, 8))},
	} {
		if _, err := keyedwindow.NewTable(spec, tt.shards, new(window.MemoryLocker), keyedwindow.Options{}); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	if _, err := keyedwindow.NewTable(window.Spec{}, good, new(window.MemoryLocker), keyedwindow.Options{}); err == nil {
		t.Error("a spec with no window: no error")
	}
	_ = fmt.Sprint()
}

// Report counts URLs by the age of their stamp, and the expired ones.
func TestReport(t *testing.T) {
	spec := window.Spec{Epoch: epoch, Window: 3 * time.Second, Generations: 3, Policy: window.FirstSeen}
	var clk clock
	tab, err := keyedwindow.NewTable(spec, keyedwindow.MemoryShards(keyed.MinTableShardBytes*4), new(window.MemoryLocker), keyedwindow.Options{Clock: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	geo := tab.Geometry()
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{100, 200, 300, 400} { // generations 0..3: the first leaves the window
		locs, res := make([]keyed.Loc, n), make([]window.Result, n)
		for i := range locs {
			locs[i] = geo.Locate(rng.Uint64())
		}
		if err := tab.DecideBatch(locs, res, nil); err != nil {
			t.Fatal(err)
		}
		clk.add(time.Second)
	}
	clk.add(-time.Second)
	r := tab.Report()
	if r.Generation != 3 || fmt.Sprint(r.Held) != "[400 300 200]" || r.Expired > 100 || r.Live() != 900 || r.FalseDup <= 0 {
		t.Fatalf("report %+v", r)
	}
}
