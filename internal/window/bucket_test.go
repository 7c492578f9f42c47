package window_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/window"
)

// table is a small windowed keyed table, decided serially (as under the
// lock), with the sweep driven by NextSweep.
type table struct {
	s       window.Spec
	buckets [][]uint32
	sweep   window.SweepState
	w       int64 // the highest generation used
}

func newTable(s window.Spec, n int) *table {
	t := &table{s: s, buckets: make([][]uint32, n)}
	for i := range t.buckets {
		t.buckets[i] = make([]uint32, 16)
	}
	return t
}

func (t *table) step(cur int64) {
	if cur > t.w && t.s.JumpNeedsSweep(t.w, cur) {
		for _, b := range t.buckets {
			t.s.SweepJump(b, t.w, cur)
		}
		t.sweep = window.SweepState{PassStart: cur}
	}
	t.w = max(t.w, cur)
	from, to, next := t.s.NextSweep(t.sweep, int64(len(t.buckets)), cur)
	for b := from; b < to; b++ {
		t.s.Sweep(t.buckets[b], cur)
	}
	t.sweep = next
}

type url struct {
	b1, b2 int
	fp     uint32
}

func (t *table) pair(u url) window.Pair { return window.Pair{B1: t.buckets[u.b1], B2: t.buckets[u.b2]} }

// Against a reference that knows every URL's stamp exactly: each decision
// over 400 generations (six wraps of the tags), with steady steps and
// sleeps of up to 90 generations, answers as the policy says, under both
// policies and several generation counts.
func TestDecideAgainstReference(t *testing.T) {
	for _, pol := range []window.Policy{window.FirstSeen, window.LastSeen} {
		for _, g := range []int{1, 3, 6, window.MaxGenerations} {
			s := window.Spec{Epoch: epoch, Window: time.Duration(g) * time.Second, Generations: g, Policy: pol}
			rng := rand.New(rand.NewPCG(uint64(g), uint64(pol)))
			tab := newTable(s, 512)
			urls := make([]url, 600) // few enough that no pair fills
			seenFP := map[uint32]bool{}
			for i := range urls {
				fp := rng.Uint32()
				for seenFP[window.Fingerprint(fp)] {
					fp = rng.Uint32()
				}
				seenFP[window.Fingerprint(fp)] = true
				urls[i] = url{rng.IntN(512), rng.IntN(512), fp}
			}
			stamp := make([]int64, len(urls))
			for i := range stamp {
				stamp[i] = -1
			}
			var news, dups int
			for cur := int64(0); cur < 400; {
				// A dry run after the sleep, before any writer swept.
				for range 20 {
					i := rng.IntN(len(urls))
					live := stamp[i] >= 0 && s.Live(cur, stamp[i])
					if c := s.Check(tab.pair(urls[i]), urls[i].fp, tab.w, cur); c != live {
						t.Fatalf("%v G=%d dry run at gen %d, last written %d, URL %d: %v, stamped %d", pol, g, cur, tab.w, i, c, stamp[i])
					}
				}
				tab.step(cur)
				for range 40 {
					i := rng.IntN(len(urls))
					live := stamp[i] >= 0 && s.Live(cur, stamp[i])
					if c := s.Check(tab.pair(urls[i]), urls[i].fp, cur, cur); c != live {
						t.Fatalf("%v G=%d gen %d URL %d: check %v, stamped %d", pol, g, cur, i, c, stamp[i])
					}
					got := s.Decide(tab.pair(urls[i]), urls[i].fp, cur)
					want := window.New
					if live {
						want = window.Dup
						dups++
					} else {
						news++
					}
					if got != want {
						t.Fatalf("%v G=%d gen %d URL %d: %v, want %v (stamped %d)", pol, g, cur, i, got, want, stamp[i])
					}
					if want == window.New || pol == window.LastSeen {
						stamp[i] = cur
					}
				}
				if rng.IntN(10) == 0 {
					cur += 1 + int64(rng.IntN(90)) // a process asleep for many generations
				} else {
					cur++
				}
			}
			if news == 0 || dups == 0 {
				t.Fatalf("%v G=%d: %d new, %d dup: the test decided nothing both ways", pol, g, news, dups)
			}
		}
	}
}

// A last-seen URL sighted every generation never comes back; a first-seen
// one comes back every G generations.
func TestPolicies(t *testing.T) {
	for _, tt := range []struct {
		pol  window.Policy
		news int
	}{{window.FirstSeen, 100/6 + 1}, {window.LastSeen, 1}} {
		s := window.Spec{Epoch: epoch, Window: 6 * time.Second, Generations: 6, Policy: tt.pol}
		tab := newTable(s, 4)
		u := url{1, 2, 0x12345678}
		news := 0
		for cur := int64(0); cur < 100; cur++ {
			tab.step(cur)
			if s.Decide(tab.pair(u), u.fp, cur) == window.New {
				news++
			}
		}
		if news != tt.news {
			t.Fatalf("%v: new %d times in 100 generations, want %d", tt.pol, news, tt.news)
		}
	}
}

// Forget makes the next sighting new and touches no other URL.
func TestForget(t *testing.T) {
	s := window.Spec{Epoch: epoch, Window: 6 * time.Second, Generations: 6, Policy: window.FirstSeen}
	tab := newTable(s, 2)
	var us []url
	for i := range 20 { // fills bucket 0 and spills into 1
		us = append(us, url{0, 1, uint32(i+1) << 8})
		if s.Decide(tab.pair(us[i]), us[i].fp, 3) != window.New {
			t.Fatalf("URL %d not new", i)
		}
	}
	if !s.Forget(tab.pair(us[4]), us[4].fp, 3) || s.Forget(tab.pair(us[4]), us[4].fp, 3) {
		t.Fatal("forget: was it live?")
	}
	for i, u := range us {
		if got := s.Check(tab.pair(u), u.fp, 3, 3); got != (i != 4) {
			t.Fatalf("after forgetting URL 4, URL %d held: %v", i, got)
		}
	}
	if s.Decide(tab.pair(us[4]), us[4].fp, 3) != window.New {
		t.Fatal("a forgotten URL is not new again")
	}
}

// With both buckets full of live URLs, a new one is answered Full (new,
// not stored); once they expire, their slots are reused.
func TestFullThenReused(t *testing.T) {
	s := window.Spec{Epoch: epoch, Window: 2 * time.Second, Generations: 2, Policy: window.FirstSeen}
	tab := newTable(s, 2)
	for i := range 32 {
		if s.Decide(tab.pair(url{0, 1, uint32(i+1) << 8}), uint32(i+1)<<8, 0) != window.New {
			t.Fatal("not new")
		}
	}
	late := url{0, 1, 0xfff << 8}
	if s.Decide(tab.pair(late), late.fp, 1) != window.Full {
		t.Fatal("a full pair stored a URL")
	}
	if s.Decide(tab.pair(late), late.fp, 2) != window.New || !s.Check(tab.pair(late), late.fp, 2, 2) {
		t.Fatal("an expired slot was not reused")
	}
}
