//go:build !linux

package api

// mapBytes allocates on the Go heap where anonymous mappings are not
// used.
func mapBytes(n int) ([]byte, error) { return make([]byte, n), nil }

func unmapBytes([]byte) {}
