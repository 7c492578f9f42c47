package literature

import (
	"fmt"
	"math/rand/v2"

	"github.com/urldedupd/urldedupd/internal/bloom"
	"github.com/urldedupd/urldedupd/internal/compare"
	"github.com/urldedupd/urldedupd/internal/mdbf"
)

// MDBFCase is one filter of the MDBF paper's comparisons, at the paper's
// tiny sizes (N = 150 bits): an MDBF of S groups, or a classic Bloom
// filter of M bits (S = 0), both with K positions per URL.
type MDBFCase struct {
	S int    // MDBF groups; 0: a Bloom filter
	N uint64 // MDBF: bits of each V1
	M uint64 // Bloom filter: bits
	K int
}

// Name says what the case is, for tables and plots.
func (c MDBFCase) Name() string {
	if c.S == 0 {
		return fmt.Sprintf("Bloom filter, %d bits, k=%d", c.M, c.K)
	}
	return fmt.Sprintf("MDBF S=%d, N=%d, k=%d (%d bits)", c.S, c.N, c.K, c.Bits())
}

// Bits is the case's memory in bits.
func (c MDBFCase) Bits() uint64 {
	if c.S == 0 {
		return c.M
	}
	return mdbf.Params{S: c.S, N: c.N, K: c.K}.Bits()
}

// Theory is the case's formula after n URLs (for an MDBF, with each group
// loaded with n/S: its formula at n).
func (c MDBFCase) Theory(n uint64) float64 {
	if c.S == 0 {
		return bloom.FalseDup(c.M, c.K, n)
	}
	return mdbf.Params{S: c.S, N: c.N, K: c.K}.FalsePositive(n)
}

// MDBFRate measures the case's false-positive rate after n URLs: trials
// fresh filters, each given n random URLs and asked about queries others.
func MDBFRate(c MDBFCase, n uint64, trials, queries int, seed uint64) (compare.Rate, error) {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	url := make([]byte, 16)
	next := func() []byte {
		for i := 0; i < len(url); i += 8 {
			v := r.Uint64()
			for j := range 8 {
				url[i+j] = byte(v >> (8 * j))
			}
		}
		return url
	}
	var rate compare.Rate
	for range trials {
		var test, add func(b []byte) bool
		if c.S == 0 {
			f, err := bloom.New(make([]byte, (c.M+63)/64*8), c.M, c.K)
			if err != nil {
				return rate, err
			}
			test = func(b []byte) bool { return f.Test(bloom.Hash(b, c.K)) }
			add = func(b []byte) bool { return f.TestAndSet(bloom.Hash(b, c.K)) }
		} else {
			f, err := mdbf.New(mdbf.Params{S: c.S, N: c.N, K: c.K})
			if err != nil {
				return rate, err
			}
			test = func(b []byte) bool { return f.Test(mdbf.HashOf(b)) }
			add = func(b []byte) bool { return f.TestAndSet(mdbf.HashOf(b)) }
		}
		for range n {
			add(next())
		}
		for range queries {
			if test(next()) {
				rate.Hits++
			}
		}
		rate.Trials += uint64(queries)
	}
	return rate, nil
}

// MDBFCurve measures the case at each of points (URLs inserted).
func MDBFCurve(c MDBFCase, points []uint64, trials, queries int, seed uint64) (compare.Result, error) {
	res := compare.Result{Info: compare.Info{Layout: c.Name(), Bytes: int64(c.Bits() / 8)}}
	for _, n := range points {
		rate, err := MDBFRate(c, n, trials, queries, seed)
		if err != nil {
			return res, err
		}
		res.Curve = append(res.Curve, compare.Point{Inserted: n, Rate: rate, Theory: c.Theory(n)})
	}
	return res, nil
}
