// Package apbf is the Age-Partitioned Bloom Filter of Shtul, Baquero and
// Almeida (arXiv 2001.03147), written from the paper as a contender for
// urldedupd's windowed layouts: k + l slices of m bits, in a ring ordered
// by age.
//
// An element is inserted by setting one bit (its hash for that slice) in
// each of the k youngest slices. It is reported present when its bits are
// set in k consecutive slices. A shift clears the oldest slice and makes
// it the youngest, so an element inserted in generation t is still found
// after l shifts and never needs one for its bits to age: it is forgotten
// between l and l + 1 generations after insertion (the slack). The paper
// shifts every g insertions (a window of insertions); here the caller
// shifts, by count or, as the Time-limited Bloom Filter (arXiv 2306.06742)
// does, by time.
package apbf

import (
	"errors"
	"fmt"
	"math/bits"
)

// ErrParams reports a filter that cannot be made.
var ErrParams = errors.New("apbf: invalid parameters")

// Filter is an age-partitioned Bloom filter. It is not safe for concurrent
// use.
type Filter struct {
	k, l  int
	m     uint64     // bits a slice
	words [][]uint64 // the slices, by physical index
	young int        // physical index of the youngest slice
	set   []uint64   // bits set a slice, by physical index
}

// New returns a filter of k + l slices of m bits (m rounded up to 64).
func New(k, l int, m uint64) (*Filter, error) {
	if k < 1 || l < 0 || k+l > 1024 || m == 0 || m > 1<<40 {
		return nil, fmt.Errorf("%w: k=%d, l=%d, m=%d (want 1 ≤ k, 0 ≤ l, k+l ≤ 1024, 0 < m ≤ 2^40)", ErrParams, k, l, m)
	}
	n := k + l
	w := (m + 63) / 64
	f := &Filter{k: k, l: l, m: w * 64, words: make([][]uint64, n), set: make([]uint64, n)}
	all := make([]uint64, uint64(n)*w)
	for i := range f.words {
		f.words[i] = all[uint64(i)*w : uint64(i+1)*w]
	}
	return f, nil
}

// K returns the slices an element is inserted in.
func (f *Filter) K() int { return f.k }

// L returns the generations an element outlives its insertion by.
func (f *Filter) L() int { return f.l }

// Bits returns the filter's memory in bits.
func (f *Filter) Bits() uint64 { return uint64(f.k+f.l) * f.m }

// phys returns the physical index of the slice of age a (0 youngest).
func (f *Filter) phys(a int) int { return (f.young + a) % (f.k + f.l) }

// pos returns sig's bit in physical slice p: double hashing, one hash a
// physical slice, so that an element's bits move with the slices' ages.
func (f *Filter) pos(sig uint64, p int) uint64 {
	h1, h2 := sig, bits.RotateLeft64(sig, 32)*0x9E3779B97F4A7C15|1
	hi, _ := bits.Mul64(h1+uint64(p)*h2, f.m)
	return hi
}

func (f *Filter) has(sig uint64, p int) bool {
	b := f.pos(sig, p)
	return f.words[p][b/64]&(1<<(b%64)) != 0
}

// Insert sets sig's bits in the k youngest slices.
func (f *Filter) Insert(sig uint64) {
	for a := range f.k {
		p := f.phys(a)
		b := f.pos(sig, p)
		w := &f.words[p][b/64]
		if *w&(1<<(b%64)) == 0 {
			*w |= 1 << (b % 64)
			f.set[p]++
		}
	}
}

// Query reports whether sig's bits are set in k consecutive slices.
func (f *Filter) Query(sig uint64) bool {
	found, _ := f.QueryCount(sig)
	return found
}

// QueryCount is Query, also returning the slices it read (each a random
// cache line).
func (f *Filter) QueryCount(sig uint64) (found bool, probes int) {
	run := 0
	for a := range f.k + f.l {
		probes++
		if f.has(sig, f.phys(a)) {
			if run++; run == f.k {
				return true, probes
			}
		} else {
			run = 0
			if a > f.l { // fewer than k slices left: no run can finish
				return false, probes
			}
		}
	}
	return false, probes
}

// Shift ages the filter by one generation: the oldest slice is cleared and
// becomes the youngest.
func (f *Filter) Shift() {
	old := f.phys(f.k + f.l - 1)
	clear(f.words[old])
	f.set[old] = 0
	f.young = old
}

// Fill returns the fraction of bits set in the slice of age a.
func (f *Filter) Fill(a int) float64 { return float64(f.set[f.phys(a)]) / float64(f.m) }
