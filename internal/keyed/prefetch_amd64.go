package keyed

// hasPrefetch: prefetch is the CPU's prefetch instruction, which returns at
// once, so DecideBatch can scan one URL's bucket while later ones load.
const hasPrefetch = true

// prefetch asks for b's cache line (PREFETCHT0): a hint, it reads nothing,
// so it can neither fault nor change the table.
//
//go:noescape
func prefetch(b *bucket)
