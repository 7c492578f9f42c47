package window_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/window"
)

var epoch = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func spec(w time.Duration, g int) window.Spec {
	return window.Spec{Epoch: epoch, Window: w, Generations: g, Policy: window.FirstSeen}
}

func TestGen(t *testing.T) {
	s := spec(30*24*time.Hour, 6) // 5-day generations
	for _, tt := range []struct {
		at   time.Time
		want int64
	}{
		{epoch, 0},
		{epoch.Add(-time.Hour), 0}, // a clock set back before the state
		{epoch.Add(5*24*time.Hour - 1), 0},
		{epoch.Add(5 * 24 * time.Hour), 1},
		{epoch.Add(31 * 24 * time.Hour), 6},
	} {
		if got := s.Gen(tt.at); got != tt.want {
			t.Errorf("Gen(%v) = %d, want %d", tt.at, got, tt.want)
		}
		if g := s.Gen(tt.at); !s.Start(g).After(tt.at) && !s.Start(g+1).After(tt.at) {
			t.Errorf("%v is not in generation %d [%v, %v)", tt.at, g, s.Start(g), s.Start(g+1))
		}
	}
}

// The generation decided with is the later of the clock's and the highest
// used: a clock behind (or set back) never takes the state back.
func TestCurrent(t *testing.T) {
	s := spec(6*time.Second, 6)
	if got := s.Current(10, epoch.Add(3*time.Second)); got != 10 {
		t.Fatalf("clock behind: %d, want 10", got)
	}
	if got := s.Current(2, epoch.Add(3500*time.Millisecond)); got != 3 {
		t.Fatalf("clock ahead: %d, want 3", got)
	}
}

func TestLive(t *testing.T) {
	s := spec(6*time.Second, 3)
	for _, tt := range []struct {
		cur, h int64
		want   bool
	}{{5, 5, true}, {5, 3, true}, {5, 2, false}, {5, 6, false}} {
		if got := s.Live(tt.cur, tt.h); got != tt.want {
			t.Errorf("Live(%d, %d) = %v", tt.cur, tt.h, got)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		s    window.Spec
		ok   bool
	}{
		{"30d in 6", spec(30*24*time.Hour, 6), true},
		{"1s in 1", spec(time.Second, 1), true},
		{"shorter than a second", spec(time.Second-1, 1), false},
		{"generations of 50ms", spec(time.Second, 20), false},
		{"no generations", spec(time.Hour, 0), false},
		{"too many generations", spec(time.Hour, window.MaxGenerations+1), false},
		{"not divisible", spec(time.Second+1, 2), false},
		{"no policy", window.Spec{Epoch: epoch, Window: time.Hour, Generations: 2}, false},
		{"no epoch", window.Spec{Window: time.Hour, Generations: 2, Policy: window.LastSeen}, false},
		{"a century", spec(36_500*24*time.Hour, 4), true},
		// Written as "73000d" in the metadata, it was refused when read.
		{"two centuries", spec(73_000*24*time.Hour, 4), false},
	} {
		err := tt.s.Validate()
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, window.ErrSpec)) {
			t.Errorf("%s: %v", tt.name, err)
		}
		// What Validate accepts is written and read back.
		if d, perr := window.ParseDuration(window.FormatDuration(tt.s.Window)); err == nil && (perr != nil || d != tt.s.Window) {
			t.Errorf("%s: window %v written as %q reads back as %v, %v", tt.name, tt.s.Window, window.FormatDuration(tt.s.Window), d, perr)
		}
	}
}

func TestPolicy(t *testing.T) {
	for _, p := range []window.Policy{window.FirstSeen, window.LastSeen} {
		if got, err := window.ParsePolicy(p.String()); err != nil || got != p {
			t.Fatalf("%v: %v %v", p, got, err)
		}
	}
	if _, err := window.ParsePolicy("newest"); !errors.Is(err, window.ErrSpec) {
		t.Fatalf("unknown policy: %v", err)
	}
}

func TestParseDuration(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		out  string
	}{
		{"30d", 30 * 24 * time.Hour, "30d"},
		{"1d12h", 36 * time.Hour, "1d12h"},
		{"24h", 24 * time.Hour, "1d"},
		{"90s", 90 * time.Second, "1m30s"},
		{"2d30m", 48*time.Hour + 30*time.Minute, "2d30m"},
		{"1d1s", 24*time.Hour + time.Second, "1d1s"},
	} {
		got, err := window.ParseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			continue
		}
		if s := window.FormatDuration(got); s != tt.out {
			t.Errorf("FormatDuration(%v) = %q, want %q", got, s, tt.out)
		}
		if back, err := window.ParseDuration(window.FormatDuration(got)); err != nil || back != got {
			t.Errorf("round trip of %v: %v %v", got, back, err)
		}
	}
	for _, bad := range []string{"", "d", "xd", "-1d", "5", "1d-2h", "1w", "3dd"} {
		if _, err := window.ParseDuration(bad); !errors.Is(err, window.ErrSpec) {
			t.Errorf("ParseDuration(%q): %v", bad, err)
		}
	}
}

func TestSlot(t *testing.T) {
	for _, fp := range []uint32{0, 1, 63, 64, 0xdeadbeef, 0xffffffff} {
		for _, g := range []int64{0, 1, 63, 64, 1_000_003} {
			v := window.Slot(fp, g)
			if v == 0 || window.SlotFingerprint(v) != window.Fingerprint(fp) || window.SlotTag(v) != window.Tag(g) {
				t.Fatalf("Slot(%#x, %d) = %#x", fp, g, v)
			}
		}
	}
	if window.Fingerprint(0x3f) != 1 {
		t.Fatal("a fingerprint of 0 must become 1")
	}
}

// Tags wrap every 64 generations: an entry is live for exactly G
// generations from its stamp, whatever the stamp.
func TestTagLive(t *testing.T) {
	for _, g := range []int{1, 6, window.MaxGenerations} {
		s := spec(time.Duration(g)*time.Second, g)
		for h := int64(0); h < 200; h += 7 {
			v := window.Slot(0xabcdef12, h)
			for cur := h; cur < h+window.Tags; cur++ {
				if got, want := s.SlotLive(cur, v), s.Live(cur, h); got != want {
					t.Fatalf("G=%d stamp %d at %d: live %v, want %v", g, h, cur, got, want)
				}
			}
		}
	}
	if (spec(time.Second, 1)).SlotLive(5, 0) {
		t.Fatal("an empty slot is live")
	}
}

// The sweep's schedule keeps every tag from repeating: an entry stamped h,
// left alone, is zeroed by a sweep before generation h+Tags, for every
// generation count, stamp and phase of the passes, and every point in a
// pass at which the sweep reaches the entry's bucket, with passes as slow
// as the schedule allows (each taking the whole horizon, back to back).
func TestSweepHorizon(t *testing.T) {
	for g := 1; g <= window.MaxGenerations; g++ {
		s := spec(time.Duration(g)*time.Second, g)
		hz := s.SweepHorizon()
		if hz < 2 {
			t.Fatalf("G=%d: horizon %d", g, hz)
		}
		for phase := int64(0); phase < hz; phase++ {
			for reach := int64(0); reach <= hz; reach++ { // generations into a pass the bucket is swept
				for h := int64(100); h < 100+hz+1; h++ {
					cleared := int64(-1)
					for p := -phase; cleared < 0 && p < h+window.Tags; p += hz {
						at := p + reach
						if at >= h && !s.Live(at, h) {
							cleared = at
						}
					}
					if cleared < 0 || cleared >= h+window.Tags {
						t.Fatalf("G=%d horizon %d phase %d reach %d: stamp %d cleared at %d, its tag repeats at %d",
							g, hz, phase, reach, h, cleared, h+window.Tags)
					}
				}
			}
		}
	}
}

func TestSweepDue(t *testing.T) {
	s := spec(6*time.Second, 6) // horizon 28: a pass spread over 14 generations
	if d := s.SweepDue(1400, 10, 10); d != 100 {
		t.Fatalf("first generation of a pass: %d, want 100", d)
	}
	if d := s.SweepDue(1400, 10, 23); d != 1400 {
		t.Fatalf("last generation of the spread: %d, want all", d)
	}
	if d := s.SweepDue(1400, 10, 9); d != 0 {
		t.Fatalf("before the pass: %d", d)
	}
	if s.Overdue(10, 10+s.SweepHorizon()-1) || !s.Overdue(10, 10+s.SweepHorizon()) {
		t.Fatal("Overdue at the horizon")
	}
}

func TestKeyedFalseDup(t *testing.T) {
	// 10 million live URLs in 3 GiB of 32-bit slots: under 1e-8.
	p := window.KeyedFalseDup(10e6, 3<<30/4)
	if p > 1e-8 || p < 5e-9 {
		t.Fatalf("10M in 3 GiB: %g", p)
	}
	if window.KeyedFalseDup(0, 1e9) != 0 || window.KeyedFalseDup(5, 0) != 0 {
		t.Fatal("empty cases")
	}
	if got, want := window.RingFalseDup([]float64{0.1, 0.2}), 1-0.9*0.8; math.Abs(got-want) > 1e-15 {
		t.Fatalf("ring: %g, want %g", got, want)
	}
}

func TestParseDurationOverflow(t *testing.T) {
	for _, s := range []string{"36501d", "36500d2562047h", "36500d1ns", "876000h1s", "1000000h"} {
		if _, err := window.ParseDuration(s); !errors.Is(err, window.ErrSpec) {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{"36500d", "876000h"} {
		if d, err := window.ParseDuration(s); err != nil || d != 36500*24*time.Hour {
			t.Errorf("a century, %q: %v %v", s, d, err)
		}
	}
}

// TestLockedReleasesOnPanic: a decision that panics (a fault on a
// truncated mapping, recovered further up) leaves the lock free.
func TestLockedReleasesOnPanic(t *testing.T) {
	var l window.MemoryLocker
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not come through")
			}
		}()
		_ = window.Locked(&l, func() { panic("fault") })
	}()
	done := make(chan struct{})
	go func() { l.Lock(); l.Unlock(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the lock is still held after the panic")
	}
}
