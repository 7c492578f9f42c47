package window

import "math"

// BucketSlots is what a windowed keyed decision compares with: two buckets
// of sixteen slots.
const BucketSlots = 32

// KeyedFalseDup returns the chance that a new URL is answered duplicate on
// a windowed keyed table of slots slots holding live URLs in the window:
// one of the live slots of its two buckets holds its fingerprint,
// 1 − (1 − 2^−FingerprintBits)^L with L = BucketSlots·live/slots.
func KeyedFalseDup(live, slots float64) float64 {
	if slots <= 0 {
		return 0
	}
	l := BucketSlots * live / slots
	return -math.Expm1(l * math.Log1p(-1/float64(uint64(1)<<FingerprintBits)))
}

// RingFalseDup returns the chance that a new URL is answered duplicate on a
// ring of bitmaps whose live generations have fills fill[i] (bits set over
// bits): set in any of them, 1 − Π(1 − f).
func RingFalseDup(fill []float64) float64 {
	miss := 1.0
	for _, f := range fill {
		miss *= 1 - f
	}
	return 1 - miss
}
