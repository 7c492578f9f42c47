package state_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/racetest"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
	"github.com/urldedupd/urldedupd/internal/window"
)

// TestEveryLayout: every registered layout is found by its name and id,
// plans, opens as a directory, decides, checks (a dry run changes
// nothing), reports and merges into an empty state, alike.
func TestEveryLayout(t *testing.T) {
	racetest.SkipSequential(t)
	ctx := context.Background()
	all := layout.All()
	if len(all) != len(format.Layouts) {
		t.Fatalf("%d layouts registered, the format has %d", len(all), len(format.Layouts))
	}
	for _, l := range all {
		t.Run(l.Name(), func(t *testing.T) {
			if got, err := layout.ByName(l.Name()); err != nil || got != l {
				t.Errorf("ByName(%q) = %v, %v", l.Name(), got, err)
			}
			if got, err := layout.Lookup(l.ID()); err != nil || got != l {
				t.Errorf("Lookup(%s) = %v, %v", l.ID(), got, err)
			}
			spec := format.Spec{Layout: l.ID(), Algorithm: signature.IEEE, Mode: signature.Safe}
			in := state.Init{Spec: spec}
			if l.ID().Keyed() {
				spec.Algorithm = signature.SipHash
				in = state.Init{Spec: spec, Capacity: 1000, FalseDup: 1e-3}
				if l.ID() != format.Keyed && l.ID() != format.KeyedWindow {
					in.Size = 1 << 20
				}
			}
			if l.ID().Windowed() {
				in.Window = window.Spec{Window: time.Hour, Generations: 1, Policy: window.FirstSeen}
			}
			m, err := in.Meta(time.Now())
			if err != nil {
				t.Fatal(err)
			}
			open := func(name string) *state.State {
				if l.ID() == format.BitmapWindow { // 1 GiB of files for nothing: the same layout in memory
					st, err := state.Memory(nil, &m)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { st.Close() })
					return st
				}
				st, err := state.Open(ctx, filepath.Join(t.TempDir(), name), &state.Options{Create: true, New: &m})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}
			src := open("src")
			urls := []string{"http://a.example/", "http://b.example/", "HTTP://A.EXAMPLE:80/", "http://c.example/"}
			if got := decideOnce(t, src, urls, true); got != "[false false false false]" {
				t.Errorf("dry run on an empty state: %s", got)
			}
			if got := decideTwice(t, src, urls); got != "[false false true false][true true true true]" {
				t.Errorf("answers %s", got)
			}
			if got := decideOnce(t, src, []string{"http://d.example/", "http://a.example/"}, true); got != "[false true]" {
				t.Errorf("dry run: %s", got)
			}
			if got := decideOnce(t, src, []string{"http://d.example/"}, true); got != "[false]" {
				t.Errorf("a dry run stored its URL: %s", got)
			}
			rep, err := src.Report(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Layout != l.Name() || rep.FillRatio <= 0 || len(rep.Shards) != 256 || rep.EstimatedDistinct == nil {
				t.Errorf("Report = %+v", rep)
			}
			dst := open("dst")
			if _, err := dst.Merge(ctx, src, nil); err != nil {
				t.Fatal(err)
			}
			if got := decideOnce(t, dst, append(urls, "http://d.example/"), true); got != "[true true true true false]" {
				t.Errorf("after merge: %s", got)
			}
		})
	}
}

// decideOnce decides urls once on st and returns the answers as text.
func decideOnce(t *testing.T, st *state.State, urls []string, dryRun bool) string {
	t.Helper()
	signer := st.Signer()
	sigs := make([]signature.Signature, len(urls))
	for i, u := range urls {
		sigs[i], _ = signer.Sign([]byte(u))
	}
	seen := make([]bool, len(sigs))
	if err := st.Decide(context.Background(), sigs, seen, dryRun); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(seen)
}
