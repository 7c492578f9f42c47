package keyed

import "unsafe"

// hasPrefetch: prefetch is the CPU's prefetch instruction, which returns at
// once, so DecideBatch can scan one URL's bucket while later ones load.
const hasPrefetch = true

// prefetch asks for b's cache line (PREFETCHT0): a hint, it reads nothing,
// so it can neither fault nor change the table.
//
//go:noescape
func prefetch(b *bucket)

// Prefetch asks for the cache line of p (PREFETCHT0), as DecideBatch
// does for its buckets: a hint that reads nothing, for the windowed
// table's batches.
func Prefetch(p *uint32) { prefetch((*bucket)(unsafe.Pointer(p))) }

// HasPrefetch reports whether Prefetch is the CPU's instruction; without
// it a caller loads the line itself.
const HasPrefetch = hasPrefetch
