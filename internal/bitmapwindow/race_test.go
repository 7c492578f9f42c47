//go:build race

package bitmapwindow_test

// raceEnabled is true under the race detector: the Redis tests decide
// fewer URLs (the same interleavings, fewer of them; -race slows every
// access tenfold).
const raceEnabled = true
