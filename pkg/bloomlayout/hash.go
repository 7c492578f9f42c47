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

// pair splits a signature into the two hashes of double hashing; h2 is
// odd, so that h1 + i·h2 modulo a power of two visits K distinct
// positions.
func pair(sig uint64) (h1, h2 uint64) { return sig & 0xffffffff, sig>>32 | 1 }

// loc is the location hash of depth d: which of c children.
func loc(sig uint64, depth, c int) int {
	return int(reduce(mix(sig+uint64(depth)*0x9e3779b97f4a7c15), uint64(c)))
}
