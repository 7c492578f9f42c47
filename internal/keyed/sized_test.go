package keyed

import "github.com/urldedupd/urldedupd/internal/racetest"

// raceDivisor is how much smaller sized makes a test under the race
// detector, which runs the same code about ten times slower.
const raceDivisor = 8

// sized returns n, or n/raceDivisor under the race detector: for the tests
// whose property is relative (a load, an overlap, a tolerance scaled to the
// table) and holds at an eighth of the size. The full size runs in make
// test's plain pass; the race pass checks the same property, with every
// memory access watched, on fewer URLs. The answers are deterministic (a
// fixed key, fixed URLs), so a size that passes passes on every run.
func sized(n int) int {
	if racetest.Enabled {
		return n / raceDivisor
	}
	return n
}
