//go:build race

package urldedupd_test

// raceEnabled is true under the race detector, whose sync.Pool drops a
// quarter of what is put in it on purpose: a Decide then allocates its
// scratch again, so allocation counts mean nothing there.
const raceEnabled = true
