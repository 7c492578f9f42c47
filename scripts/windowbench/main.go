// Command windowbench measures urldedupd's windowed keyed table against the
// Age-Partitioned Bloom Filter (internal/apbf, shifted by time as the
// Time-limited Bloom Filter does) at equal memory, on one time-stamped
// stream whose insertion rate is bursty: false duplicates and lost URLs
// against the exact window, cache lines a decision, and decisions a
// second. Both keep the same window semantics (G generations; a URL held
// from D − D/G to D after the sighting that stamped it), so every
// difference from the exact answer is an error of the structure.
//
// Usage: go run ./scripts/windowbench [-mem 4MiB] [-events 4000000] [-policy first-seen]
//
//	go run ./scripts/windowbench -false-dup -mem 3GiB -urls 10000000 -queries 100000000
//	go run ./scripts/windowbench -rotation /var/tmp [-fill 10000000] [-duration 4s]
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"time"

	"github.com/urldedupd/urldedupd/internal/apbf"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/keyedwindow"
	"github.com/urldedupd/urldedupd/internal/window"
)

func main() {
	mem := flag.String("mem", "4MiB", "memory of each structure (a power of two, at least 256 × 128 B)")
	events := flag.Int("events", 4_000_000, "sightings in the stream")
	pol := flag.String("policy", "first-seen", "first-seen or last-seen")
	gens := flag.Int("generations", 6, "generations in the window")
	fp := flag.Bool("false-dup", false, "instead: fill a windowed keyed table of -mem with -urls URLs spread over the window and query -queries URLs never inserted")
	urls := flag.Int("urls", 10_000_000, "with -false-dup: URLs held")
	queries := flag.Int("queries", 100_000_000, "with -false-dup: never-inserted queries")
	rot := flag.String("rotation", "", "instead: measure a rotation under 4 deciders on a windowed keyed state made in this directory")
	fill := flag.Int("fill", 10_000_000, "with -rotation: URLs the state holds first")
	dur := flag.Duration("duration", 4*time.Second, "with -rotation: how long the deciders run (the rotation half way)")
	flag.Parse()
	if *rot != "" {
		check(rotation(*rot, *fill, *dur))
		return
	}
	bytes, err := format.ParseBytes(*mem)
	check(err)
	p, err := window.ParsePolicy(*pol)
	check(err)
	if *fp {
		check(falseDup(bytes, *gens, *urls, *queries))
		return
	}
	s := newStream(*events, *gens, 8, 1)
	fmt.Printf("%d sightings of %d URLs over %d windows of %d generations, bursts of 8x in 15%% of the time; %s; %s each\n\n",
		len(s.ids), s.distinct, 8, *gens, p, *mem)
	fmt.Println("| structure | false duplicates | remembered past the window (slack) | lost (new within the window) | cache lines a decision | decisions/s |")
	fmt.Println("|---|---|---|---|---|---|")
	r, err := runKeyed(s, p, bytes)
	check(err)
	r.print()
	for _, k := range []int{2, 4, 6, 8, 10, 12, 16} {
		r, err := runAPBF(s, p, bytes, k)
		check(err)
		r.print()
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "windowbench:", err)
		os.Exit(1)
	}
}

// stream is the time-stamped input: URL ids, the generation each is
// sighted in, and the exact answers.
type stream struct {
	ids      []int
	gens     []int64
	distinct int
	g        int
}

// newStream makes n sightings over w windows of g generations: time in
// slots of a fifth of a generation, 15% of the slots bursts at burst
// times the rate; half the sightings new URLs, half repeats of a sighting
// from the last two windows.
func newStream(n, g, w int, seed uint64) *stream {
	rng := rand.New(rand.NewPCG(seed, 11))
	slots := g * w * 5
	weight := make([]float64, slots)
	total := 0.0
	for i := range weight {
		weight[i] = 1
		if rng.Float64() < 0.15 {
			weight[i] = 8
		}
		total += weight[i]
	}
	s := &stream{g: g}
	times := make([]float64, 0, n)
	for i, wt := range weight {
		k := int(float64(n) * wt / total)
		for range k {
			times = append(times, (float64(i)+rng.Float64())/5)
		}
	}
	sort.Float64s(times)
	for i, t := range times {
		id := s.distinct
		if i > 0 && rng.IntN(2) == 0 {
			lo := sort.SearchFloat64s(times[:i], t-2*float64(g))
			id = s.ids[lo+rng.IntN(i-lo)]
		} else {
			s.distinct++
		}
		s.ids = append(s.ids, id)
		s.gens = append(s.gens, int64(t))
	}
	return s
}

// hash is a URL's 64-bit keyed hash.
func hash(id int) uint64 {
	z := uint64(id)*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

type result struct {
	name      string
	falseDup  int // answered duplicate, sighted never or more than two windows before
	slack     int // answered duplicate, last stamped one to two windows before
	lost      int
	decisions int
	lines     float64
	elapsed   time.Duration
}

func (r result) print() {
	fmt.Printf("| %s | %d (%.2g) | %d (%.2g) | %d | %.1f | %.2fM |\n", r.name,
		r.falseDup, float64(r.falseDup)/float64(r.decisions), r.slack, float64(r.slack)/float64(r.decisions),
		r.lost, r.lines, float64(r.decisions)/r.elapsed.Seconds()/1e6)
}

// truth keeps each URL's stamp under the policy, from the exact answers.
type truth struct {
	stamp map[int]int64
	g     int64
	pol   window.Policy
}

// decide returns the exact answer, and whether the URL was stamped one to
// two windows before (a duplicate answer then is slack, not chance).
func (t *truth) decide(id int, gen int64) (dup, recent bool) {
	s, ok := t.stamp[id]
	dup = ok && gen-s < t.g
	recent = ok && !dup && gen-s < 2*t.g
	if !dup || t.pol == window.LastSeen {
		t.stamp[id] = gen
	}
	return dup, recent
}

func (r *result) score(exact, recent, dup bool) {
	r.decisions++
	switch {
	case dup && !exact && recent:
		r.slack++
	case dup && !exact:
		r.falseDup++
	case !dup && exact:
		r.lost++
	}
}

func runKeyed(s *stream, pol window.Policy, mem int64) (result, error) {
	r := result{name: "windowed keyed (urldedupd)", lines: 2}
	var gen int64
	epoch := time.Unix(0, 0)
	spec := window.Spec{Epoch: epoch, Window: time.Duration(s.g) * time.Second, Generations: s.g, Policy: pol}
	area := mem/keyed.Shards - keyedwindow.HeaderBytes
	for area&(area-1) != 0 {
		area &= area - 1
	}
	tab, err := keyedwindow.NewTable(spec, keyedwindow.MemoryShards(area), new(window.MemoryLocker),
		keyedwindow.Options{Clock: func() time.Time { return epoch.Add(time.Duration(gen) * time.Second) }})
	if err != nil {
		return r, err
	}
	geo := tab.Geometry()
	locs := make([]keyed.Loc, len(s.ids))
	for i, id := range s.ids {
		locs[i] = geo.Locate(hash(id))
	}
	answers := make([]window.Result, len(s.ids))
	start := time.Now()
	for i := 0; i < len(s.ids); { // batches of up to 1,024 sightings of one generation, as filter makes them
		gen = s.gens[i]
		j := i + 1
		for j < len(s.ids) && j-i < 1024 && s.gens[j] == gen {
			j++
		}
		if err := tab.DecideBatch(locs[i:j], answers[i:j], nil); err != nil {
			return r, err
		}
		i = j
	}
	r.elapsed = time.Since(start)
	t := &truth{stamp: map[int]int64{}, g: int64(s.g), pol: pol}
	for i, id := range s.ids {
		exact, recent := t.decide(id, s.gens[i])
		r.score(exact, recent, answers[i] == window.Dup)
	}
	return r, nil
}

func runAPBF(s *stream, pol window.Policy, mem int64, k int) (result, error) {
	l := s.g - 1 // held from l to l+1 generations after: the same as G generations counted from the stamp's
	f, err := apbf.New(k, l, uint64(mem*8)/uint64(k+l))
	if err != nil {
		return result{}, err
	}
	r := result{name: fmt.Sprintf("APBF k=%d l=%d", k, l)}
	answers := make([]bool, len(s.ids))
	gen := s.gens[0]
	probes := 0
	start := time.Now()
	for i, id := range s.ids {
		for ; gen < s.gens[i]; gen++ {
			f.Shift()
		}
		h := hash(id)
		dup, n := f.QueryCount(h)
		probes += n
		if !dup || pol == window.LastSeen {
			f.Insert(h)
			probes += k
		}
		answers[i] = dup
	}
	r.elapsed = time.Since(start)
	r.lines = float64(probes) / float64(len(s.ids))
	t := &truth{stamp: map[int]int64{}, g: int64(s.g), pol: pol}
	for i, id := range s.ids {
		exact, recent := t.decide(id, s.gens[i])
		r.score(exact, recent, answers[i])
	}
	return r, nil
}

// falseDup fills a windowed keyed table of mem bytes with n URLs, an equal
// share stamped in each generation of the window, then asks q URLs never
// inserted, and prints the false duplicates against the model.
func falseDup(mem int64, g, n, q int) error {
	epoch := time.Unix(0, 0)
	var gen int64
	spec := window.Spec{Epoch: epoch, Window: time.Duration(g) * time.Second, Generations: g, Policy: window.FirstSeen}
	area := mem/keyed.Shards - keyedwindow.HeaderBytes
	for area&(area-1) != 0 {
		area &= area - 1
	}
	tab, err := keyedwindow.NewTable(spec, keyedwindow.MemoryShards(area), new(window.MemoryLocker),
		keyedwindow.Options{Clock: func() time.Time { return epoch.Add(time.Duration(gen) * time.Second) }})
	if err != nil {
		return err
	}
	geo := tab.Geometry()
	locs, res := make([]keyed.Loc, 1024), make([]window.Result, 1024)
	start := time.Now()
	full := 0
	for i := 0; i < n; i += len(locs) {
		gen = int64(i * g / n)
		m := min(len(locs), n-i)
		for j := range m {
			locs[j] = geo.Locate(hash(i + j))
		}
		if err := tab.DecideBatch(locs[:m], res[:m], nil); err != nil {
			return err
		}
		for _, r := range res[:m] {
			if r == window.Full {
				full++
			}
		}
	}
	fill := time.Since(start)
	rep := tab.Report()
	seen := make([]bool, 1024)
	dups := 0
	start = time.Now()
	for i := 0; i < q; i += len(locs) {
		m := min(len(locs), q-i)
		for j := range m {
			locs[j] = geo.Locate(hash(n + i + j)) // never inserted
		}
		tab.Check(locs[:m], seen[:m])
		for _, s := range seen[:m] {
			if s {
				dups++
			}
		}
	}
	fmt.Printf("windowed keyed, %d MiB (%d slots), %d generations: %d URLs held (%d not stored), %v to fill\n",
		(area+keyedwindow.HeaderBytes)*keyed.Shards>>20, rep.Slots, g, rep.Live(), full, fill.Round(time.Millisecond))
	fmt.Printf("%d of %d never-inserted URLs answered duplicate: %.3g (model %.3g), %v\n",
		dups, q, float64(dups)/float64(q), rep.FalseDup, time.Since(start).Round(time.Millisecond))
	return nil
}
