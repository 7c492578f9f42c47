package bloom

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// MaxK is the most positions a URL can have: the ten 32-bit words of its
// CRC32, MD5 and SHA1.
const MaxK = 10

// MaxBits is the largest filter: 2^32 bits (512 MiB), the most a 32-bit
// position addresses.
const MaxBits = 1 << 32

// ErrParams is returned for a filter size or k out of range.
var ErrParams = errors.New("bloom: bad parameters")

// Positions are a URL's k bit positions, before reduction modulo m.
type Positions struct {
	w [MaxK]uint32
	k int
}

// Hash computes the first k positions of b (1 ≤ k ≤ MaxK), computing only
// the digests they need.
func Hash(b []byte, k int) Positions {
	p := Positions{k: k}
	p.w[0] = crc32.ChecksumIEEE(b)
	if k > 1 {
		d := md5.Sum(b)
		for i := range 4 {
			p.w[1+i] = binary.BigEndian.Uint32(d[4*i:])
		}
	}
	if k > 5 {
		d := sha1.Sum(b)
		for i := range 5 {
			p.w[5+i] = binary.BigEndian.Uint32(d[4*i:])
		}
	}
	return p
}

// Filter is a Bloom filter over memory the caller owns (a heap slice, or
// a file mapped MAP_SHARED by many processes): m bits, LSB first within
// each byte. It is safe for concurrent use (see the package doc for what
// that guarantees).
type Filter struct {
	words []uint64
	m     uint64
	mask  uint64 // m − 1 when m is a power of two, else 0
	k     int
}

// New returns a filter of k positions over the first m bits of mem, which
// must be 8-byte aligned and hold at least m bits rounded up to 64. m need
// not be a power of two (the patent's experiment used 80,000 and
// 8,000,000), but a power of two is faster.
func New(mem []byte, m uint64, k int) (*Filter, error) {
	if k < 1 || k > MaxK || m < 64 || m > MaxBits || uint64(len(mem))*8 < (m+63)/64*64 {
		return nil, fmt.Errorf("%w: m %d bits, k %d, %d bytes of memory (want 1 ≤ k ≤ %d, 64 ≤ m ≤ 2^32, memory for m bits)",
			ErrParams, m, k, len(mem), MaxK)
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(mem)))%8 != 0 {
		return nil, fmt.Errorf("%w: memory not 8-byte aligned", ErrParams)
	}
	f := &Filter{words: unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(mem))), len(mem)/8), m: m, k: k}
	if bits.OnesCount64(m) == 1 {
		f.mask = m - 1
	}
	return f, nil
}

// M returns the filter's size in bits; K its positions per URL.
func (f *Filter) M() uint64 { return f.m }

// K returns the positions per URL.
func (f *Filter) K() int { return f.k }

func (f *Filter) bit(w uint32) (*uint64, uint64) {
	var i uint64
	if f.mask != 0 {
		i = uint64(w) & f.mask
	} else {
		i = uint64(w) % f.m
	}
	return &f.words[i>>6], 1 << ((i & 63) ^ swizzle)
}

// Test reports whether all of p's bits are set: a duplicate.
func (f *Filter) Test(p Positions) bool {
	for _, w := range p.w[:f.k] {
		word, m := f.bit(w)
		if atomic.LoadUint64(word)&m == 0 {
			return false
		}
	}
	return true
}

// TestAndSet sets p's bits and reports whether they were all set before:
// true is a duplicate, false a new URL.
func (f *Filter) TestAndSet(p Positions) (seen bool) {
	seen = true
	for _, w := range p.w[:f.k] {
		word, m := f.bit(w)
		if atomic.LoadUint64(word)&m == 0 && atomic.OrUint64(word, m)&m == 0 {
			seen = false
		}
	}
	return seen
}

// Fill returns the fraction of the m bits set.
func (f *Filter) Fill() float64 {
	var n uint64
	full := f.m / 64
	for i := range f.words[:full] {
		n += uint64(bits.OnesCount64(atomic.LoadUint64(&f.words[i])))
	}
	if r := f.m % 64; r != 0 {
		n += uint64(bits.OnesCount64(atomic.LoadUint64(&f.words[full]) & (1<<r - 1)))
	}
	return float64(n) / float64(f.m)
}

// FalseDup is the chance that the next new URL is reported a duplicate
// after n distinct URLs in a filter of m bits and k positions:
// (1 − e^(−kn/m))^k.
func FalseDup(m uint64, k int, n uint64) float64 {
	return math.Pow(-math.Expm1(-float64(k)*float64(n)/float64(m)), float64(k))
}

// FalseDupFromFill is the same chance from the measured fraction of bits
// set: fill^k.
func FalseDupFromFill(fill float64, k int) float64 { return math.Pow(fill, float64(k)) }

// swizzle maps a bit's offset within its 8 bytes (LSB-first bytes in
// address order) to its place in the native uint64, as package bitcheck
// does: identity on little-endian machines, a byte swap on big-endian ones.
var swizzle = func() uint64 {
	x := uint64(1)
	if *(*byte)(unsafe.Pointer(&x)) == 1 {
		return 0
	}
	return 56
}()
