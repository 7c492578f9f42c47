package bloomlayout

import "math/bits"

// mix is splitmix64's finalizer: it spreads x's bits over all 64.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// reduce maps x uniformly onto 0..n−1 (Lemire's multiply-shift).
func reduce(x, n uint64) uint64 {
	hi, _ := bits.Mul64(x, n)
	return hi
}

// golden is 2^64/φ, splitmix64's increment.
const golden = 0x9e3779b97f4a7c15

// stream is the seed of a URL's positions: position i is the i-th output
// of splitmix64 from it, reduced onto the filter. Each position is a full
// 64-bit hash, so two URLs share all their positions only when their
// signatures are equal. (Double hashing, h1 + i·h2 from the signature's
// halves, was tried first: an h2 ≡ 0 modulo a leaf's size, one URL in
// 2^19, makes all K positions one, and TestFilterLayoutsExactlyOnce lost a
// URL to it at fmax 1e-9.)
type stream uint64

func newStream(sig uint64) stream { return stream(mix(sig ^ 0x6a09e667f3bcc909)) }

// at returns position i of the stream on a filter of m bits.
func (s stream) at(i, m uint64) uint64 { return reduce(mix(uint64(s)+i*golden), m) }

// loc is the location hash of depth d: which of c children.
func loc(sig uint64, depth, c int) int {
	return int(reduce(mix(sig+uint64(depth)*golden), uint64(c)))
}
