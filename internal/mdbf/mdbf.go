package mdbf

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// ErrParams is returned for parameters a filter cannot have.
var ErrParams = errors.New("mdbf: bad parameters")

// Params shape a filter.
type Params struct {
	S  int    // groups (≥ 1)
	N  uint64 // bits of each V1 (≥ K); each V2 has N/K
	K  int    // hash functions of a group (≥ 2)
	K2 int    // of them, those of V2 (1 ≤ K2 < K); 0 is 1
}

func (p Params) k2() int {
	if p.K2 == 0 {
		return 1
	}
	return p.K2
}

func (p Params) check() error {
	if p.S < 1 || p.S > 1<<16 || p.K < 2 || p.K > 32 || p.k2() >= p.K || p.k2() < 1 || p.N < uint64(p.K) || p.N > 1<<40 {
		return fmt.Errorf("%w: %+v", ErrParams, p)
	}
	return nil
}

// Bits returns the filter's size: S·(N + N/K) bits.
func (p Params) Bits() uint64 { return uint64(p.S) * (p.N + p.N/uint64(p.K)) }

// FalsePositive is the chance, by the formula of the package doc, that a
// URL not held is reported present after n URLs.
func (p Params) FalsePositive(n uint64) float64 {
	per := float64(n) / float64(p.S)
	k1, k2 := float64(p.K-p.k2()), float64(p.k2())
	p1 := math.Pow(-math.Expm1(-k1*per/float64(p.N)), k1)
	p2 := math.Pow(-math.Expm1(-k2*per/float64(p.N/uint64(p.K))), k2)
	return -math.Expm1(float64(p.S) * math.Log1p(-p1*p2))
}

type group struct{ v1, v2 []uint64 }

// Filter is an MDBF in memory, safe for concurrent use (one mutex).
type Filter struct {
	p      Params
	mu     sync.Mutex
	groups []group
	loaded uint64
}

// Loaded returns how many URLs have all their bits set in their own group:
// those inserted, and those found there already. A new URL found present
// in another group only (a false positive) is not inserted, so after n new
// URLs fewer than n are loaded when S > 1, and FalsePositive(Loaded()) is
// the filter's rate.
func (f *Filter) Loaded() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loaded
}

// New returns an empty filter of p.
func New(p Params) (*Filter, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	f := &Filter{p: p, groups: make([]group, p.S)}
	for i := range f.groups {
		f.groups[i] = group{make([]uint64, (p.N+63)/64), make([]uint64, (p.N/uint64(p.K)+63)/64)}
	}
	return f, nil
}

// Hash is a URL's hashes: (a1, b1) for V1's positions, (a2, b2) for V2's,
// g for its group.
type Hash struct{ a1, b1, a2, b2, g uint64 }

// HashOf hashes b, a URL in normal form, with SipHash-1-3 under public
// keys, and derives independent-looking values for V1, V2 and the group by
// mixing (positions by double hashing, a + i·b; V2's must not be V1's
// reduced modulo N/K, which shared hashes would make them).
func HashOf(b []byte) Hash {
	h1 := signature.SipHash13(0x6d646266, 1, b)
	h2 := signature.SipHash13(0x6d646266, 2, b)
	return Hash{h1, h2 | 1, mix(h1 + 0x9e3779b97f4a7c15), mix(h2+0x3c6ef372fe94f82a) | 1, mix(h1 ^ bits.RotateLeft64(h2, 29))}
}

// mix is splitmix64's finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// each calls fn with each of h's bits in group g, k1 in V1 then k2 in V2,
// until fn returns false; it reports whether none did.
func (f *Filter) each(g *group, h Hash, fn func(v []uint64, b uint64) bool) bool {
	n1, n2 := f.p.N, f.p.N/uint64(f.p.K)
	k2 := uint64(f.p.k2())
	k1 := uint64(f.p.K) - k2
	for i := range k1 {
		if !fn(g.v1, (h.a1+i*h.b1)%n1) {
			return false
		}
	}
	for i := range k2 {
		if !fn(g.v2, (h.a2+i*h.b2)%n2) {
			return false
		}
	}
	return true
}

func isSet(v []uint64, b uint64) bool { return v[b>>6]&(1<<(b&63)) != 0 }

// Test reports whether h is present in any one group.
func (f *Filter) Test(h Hash) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.test(h)
}

func (f *Filter) test(h Hash) bool {
	for i := range f.groups {
		if f.each(&f.groups[i], h, isSet) {
			return true
		}
	}
	return false
}

// TestAndSet inserts h into its group unless it is present, and reports
// whether it was.
func (f *Filter) TestAndSet(h Hash) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	hi, _ := bits.Mul64(h.g, uint64(f.p.S))
	own := &f.groups[hi]
	if f.test(h) {
		if f.each(own, h, isSet) {
			f.loaded++
		}
		return true
	}
	f.loaded++
	f.each(own, h, func(v []uint64, b uint64) bool { v[b>>6] |= 1 << (b & 63); return true })
	return false
}
