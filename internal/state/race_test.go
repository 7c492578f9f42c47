//go:build race

package state_test

// raceEnabled is true under the race detector (see sized_test.go and
// TestKeyedDecideNoAllocs).
const raceEnabled = true
