//go:build race

package source

// raceEnabled is true under the race detector, which allocates where the
// code does not.
const raceEnabled = true
