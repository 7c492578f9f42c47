package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
	"github.com/urldedupd/urldedupd/internal/window"
)

// rotation measures what a rotation costs the processes deciding: a
// windowed keyed state directory (512 MiB of buckets, a window of 6
// generations) holding fill URLs, four deciders each with its own open
// state (its own lock file description, as four processes have), batches
// of 1,024 new URLs in a loop for dur; half way the shared clock moves to
// the next generation. It prints the longest batch before and after, and
// the URLs decided in each tenth of a second around the rotation.
func rotation(dir string, fill int, dur time.Duration) error {
	var now atomic.Int64
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	spec := format.Spec{Layout: format.KeyedWindow, Algorithm: signature.SipHash, Mode: signature.Safe}
	in := state.Init{Spec: spec, Window: window.Spec{Window: 30 * 24 * time.Hour, Generations: 6, Policy: window.FirstSeen}}
	m, err := in.Meta(time.Now())
	if err != nil {
		return err
	}
	now.Store(m.Window.Epoch.Add(time.Hour).UnixNano())
	dir = filepath.Join(dir, "rotation-state")
	defer os.RemoveAll(dir)
	open := func() (*state.State, error) {
		return state.Open(context.Background(), dir, &state.Options{Create: true, New: &m, Spec: &spec, Clock: clock})
	}
	st, err := open()
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	sigs, seen := make([]signature.Signature, 1024), make([]bool, 1024)
	for done := 0; done < fill; done += len(sigs) {
		for i := range sigs {
			sigs[i] = signature.Signature(rng.Uint64())
		}
		if err := st.Decide(ctx, sigs, seen, false); err != nil {
			return err
		}
	}
	type sample struct {
		at  time.Duration
		lat time.Duration
	}
	const deciders = 4
	samples := make([][]sample, deciders)
	start := time.Now()
	rotateAt := dur / 2
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for d := range deciders {
		s, err := open()
		if err != nil {
			return err
		}
		defer s.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(d), 7))
			sigs, seen := make([]signature.Signature, 1024), make([]bool, 1024)
			for time.Since(start) < dur {
				for i := range sigs {
					sigs[i] = signature.Signature(rng.Uint64())
				}
				t0 := time.Now()
				if err := s.Decide(ctx, sigs, seen, false); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				samples[d] = append(samples[d], sample{at: t0.Sub(start), lat: time.Since(t0)})
			}
		}()
	}
	time.Sleep(rotateAt)
	now.Add(int64(m.Window.Length())) // the next generation
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return err
	}
	var before, after time.Duration
	bins := map[int]int{}
	var all []time.Duration
	for _, ss := range samples {
		for _, s := range ss {
			all = append(all, s.lat)
			if s.at < rotateAt {
				before = max(before, s.lat)
			} else {
				after = max(after, s.lat)
			}
			bins[int((s.at-rotateAt)/(100*time.Millisecond))] += 1024
		}
	}
	slices.Sort(all)
	fmt.Printf("rotation with %d deciders, batches of 1,024 new URLs, state holding %d URLs, %v:\n", deciders, fill, dur)
	fmt.Printf("  longest batch before the rotation %v, after it %v; median batch %v, p99 %v\n",
		before, after, all[len(all)/2], all[len(all)*99/100])
	fmt.Printf("  URLs decided per 100 ms, relative to the rotation:")
	for b := -5; b < 5; b++ {
		fmt.Printf(" %+d:%d", b, bins[b])
	}
	fmt.Println()
	return nil
}
