// Package racetest tells a test whether it runs under the race detector
// (go test -race), and lets a test that computes on one goroutine leave
// the race pass.
//
// make test runs every test twice: a plain pass, then a pass with -race
// over the library's packages. The detector watches memory that two
// goroutines share; a test whose work all happens on the goroutine that
// runs it gives it nothing to watch, and runs 5 to 30 times slower under
// it (a statistical test of a filter's false-duplicate rate went from
// under 1 s to 27 s). Such a test calls [SkipSequential] and runs in the
// plain pass only. A test that starts goroutines, opens a state with a
// background flush, or talks to processes stays in both, unless what it
// asserts is a count of allocations ([SkipAllocations]).
package racetest

import "testing"

// SkipSequential skips t under the race detector: t does all its work on
// its own goroutine, so the detector has nothing to watch, and the plain
// pass runs it in full.
func SkipSequential(t testing.TB) {
	t.Helper()
	if Enabled {
		t.Skip("one goroutine: nothing for the race detector to watch; the plain pass runs it")
	}
}

// SkipAllocations skips t under the race detector: t asserts counts of
// allocations, which are the plain pass's to measure (the detector's
// build is not the one that ships), and the goroutines it starts are
// raced by other tests of its package, which its call site names.
func SkipAllocations(t testing.TB) {
	t.Helper()
	if Enabled {
		t.Skip("counts allocations: the plain pass measures them on the build that ships")
	}
}
