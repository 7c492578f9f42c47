//go:build !amd64

package keyed

// hasPrefetch: without a prefetch instruction DecideBatch loads every
// chunk's lines in a first pass of its own instead.
const hasPrefetch = false

func prefetch(*bucket) {}

// Prefetch does nothing without a prefetch instruction (see HasPrefetch).
func Prefetch(*uint32) {}

// HasPrefetch reports whether Prefetch is the CPU's instruction.
const HasPrefetch = hasPrefetch
