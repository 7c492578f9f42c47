//go:build !race

package keyed

// raceEnabled is true under the race detector (see sized_test.go).
const raceEnabled = false
