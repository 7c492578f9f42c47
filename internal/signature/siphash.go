package signature

import (
	"encoding/binary"
	"math/bits"
)

// SipHash13 returns SipHash-1-3 (Aumasson and Bernstein's SipHash with one
// compression and three finalization rounds) of p under the key (k0, k1):
// the variant Rust's and Python's hash tables use against hash flooding, at
// about 60% of SipHash-2-4's cost (14.3 against 23.3 ns for a 55-byte URL
// on this machine; docs/BENCHMARKS.md). It is checked in tests against
// SipHash-2-4 of github.com/dchest/siphash (the same code with 2 and 4
// rounds) and against github.com/dgryski/go-sip13. It is the keyed layout's
// hash, and, under public keys, a fast well-mixed hash for layouts that
// need one.
func SipHash13(k0, k1 uint64, p []byte) uint64 {
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	b := uint64(len(p)) << 56
	for ; len(p) >= 8; p = p[8:] {
		m := binary.LittleEndian.Uint64(p)
		v3 ^= m
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0 ^= m
	}
	switch len(p) {
	case 7:
		b |= uint64(p[6]) << 48
		fallthrough
	case 6:
		b |= uint64(p[5]) << 40
		fallthrough
	case 5:
		b |= uint64(p[4]) << 32
		fallthrough
	case 4:
		b |= uint64(binary.LittleEndian.Uint32(p))
	case 3:
		b |= uint64(p[2]) << 16
		fallthrough
	case 2:
		b |= uint64(binary.LittleEndian.Uint16(p))
	case 1:
		b |= uint64(p[0])
	}
	v3 ^= b
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0 ^= b
	v2 ^= 0xff
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	return v0 ^ v1 ^ v2 ^ v3
}

func sipRound(v0, v1, v2, v3 uint64) (uint64, uint64, uint64, uint64) {
	v0 += v1
	v1 = bits.RotateLeft64(v1, 13)
	v1 ^= v0
	v0 = bits.RotateLeft64(v0, 32)
	v2 += v3
	v3 = bits.RotateLeft64(v3, 16)
	v3 ^= v2
	v0 += v3
	v3 = bits.RotateLeft64(v3, 21)
	v3 ^= v0
	v2 += v1
	v1 = bits.RotateLeft64(v1, 17)
	v1 ^= v2
	v2 = bits.RotateLeft64(v2, 32)
	return v0, v1, v2, v3
}
