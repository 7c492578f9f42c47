package bloomlayout

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// array is the state's shards seen as one array of bits, LSB first within
// each byte (the bitmap's order), read and written with atomic word
// operations.
type array struct {
	shards [][]uint64
	shift  uint   // log2 of the bits of a shard
	mask   uint64 // bits of a shard − 1
}

func newArray(shards [][]byte) array {
	a := array{shards: make([][]uint64, len(shards))}
	for i, s := range shards {
		a.shards[i] = unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(s))), len(s)/8)
	}
	n := uint64(len(shards[0])) * 8
	a.shift, a.mask = uint(bits.TrailingZeros64(n)), n-1
	return a
}

// bits is the array's size in bits.
func (a array) bits() uint64 { return uint64(len(a.shards)) << a.shift }

func (a array) word(b uint64) (*uint64, uint64) {
	s := a.shards[b>>a.shift]
	i := b & a.mask
	return &s[i>>6], 1 << ((i & 63) ^ swizzle)
}

func (a array) get(b uint64) bool {
	w, m := a.word(b)
	return atomic.LoadUint64(w)&m != 0
}

// set sets bit b and reports whether it was set.
func (a array) set(b uint64) bool {
	w, m := a.word(b)
	return atomic.LoadUint64(w)&m != 0 || atomic.OrUint64(w, m)&m != 0
}

// count returns the bits set from bit lo (a multiple of 64) for n bits (a
// multiple of 64), within one shard or across several.
func (a array) count(lo, n uint64) uint64 {
	var c uint64
	for b := lo; b < lo+n; b += 64 {
		w, _ := a.word(b)
		c += uint64(bits.OnesCount64(atomic.LoadUint64(w)))
	}
	return c
}

// swizzle maps a bit's offset within its 8 bytes (LSB-first bytes in
// address order) to its place in the native uint64: identity on
// little-endian machines, a byte swap on big-endian ones.
var swizzle = func() uint64 {
	x := uint64(1)
	if *(*byte)(unsafe.Pointer(&x)) == 1 {
		return 0
	}
	return 56
}()

// loadBE and storeBE read and write a big-endian uint64 atomically (the
// DSBF leaf header's fields, big-endian as Redis's BITFIELD has them).
func loadBE(p *uint64) uint64 {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], atomic.LoadUint64(p))
	return binary.BigEndian.Uint64(b[:])
}

func storeBE(p *uint64, v uint64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	atomic.StoreUint64(p, binary.NativeEndian.Uint64(b[:]))
}
