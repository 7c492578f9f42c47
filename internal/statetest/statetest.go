// Package statetest makes states for tests that do not test the files: in
// memory (state.Memory), of any layout this build registers, made in no
// time and gone when the test ends. Tests of the file format, of locking
// across processes and of durability open directories instead; for the
// last, Disk plays a power loss on a directory's shards.
package statetest

import (
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
	"github.com/urldedupd/urldedupd/internal/window"
)

// Key is the key of every keyed state statetest makes: fixed, so that a
// test's answers are the same at every run (a real state's key is secret
// and random).
var Key = signature.Key{0: 0x75, 1: 0x72, 2: 0x6c, 15: 0x01}

// Bitmap returns an in-memory state of the default format (the bitmap),
// closed when the test ends.
func Bitmap(tb testing.TB) *state.State {
	tb.Helper()
	st, err := state.Memory(nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// Meta returns the metadata init would write for the layout named name
// ("bitmap", "keyed", "bloom", "mdbf", "dsbf") at its default size, with
// Key for the keyed layouts.
func Meta(tb testing.TB, name string) format.Meta {
	tb.Helper()
	l, err := layout.ByName(name)
	if err != nil {
		tb.Fatal(err)
	}
	spec := format.Default
	spec.Layout = l.ID()
	in := state.Init{Spec: spec}
	if l.ID().Keyed() {
		spec.Algorithm = signature.SipHash
		in.Spec = spec
		k := Key
		in.Key = &k
	}
	if l.ID().Windowed() {
		// One generation of 9,000 days from the Unix epoch (the current
		// one ends in December 2043): nothing leaves within a test. (An
		// hour's generation ended on every whole hour, and a test that ran
		// across one saw its state forget everything between two
		// decisions: a fresh-clone run at 08:00 UTC did.)
		in.Window = window.Spec{Window: 9000 * 24 * time.Hour, Generations: 1, Policy: window.FirstSeen}
	}
	m, err := in.Meta(time.Unix(0, 0))
	if err != nil {
		tb.Fatalf("statetest: %s: %v", name, err)
	}
	return m
}

// Memory returns an in-memory state of the layout named name (see Meta),
// closed when the test ends.
func Memory(tb testing.TB, name string) *state.State {
	tb.Helper()
	m := Meta(tb, name)
	st, err := state.Memory(&m.Spec, &m)
	if err != nil {
		tb.Fatalf("statetest: %s in memory: %v", name, err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// Layouts are the names of every layout this build registers.
func Layouts() []string {
	var names []string
	for _, l := range layout.All() {
		names = append(names, l.Name())
	}
	return names
}
