package bloom_test

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"testing"

	"github.com/urldedupd/urldedupd/internal/bloom"
	"github.com/urldedupd/urldedupd/internal/racetest"
)

func newFilter(t testing.TB, m uint64, k int) *bloom.Filter {
	t.Helper()
	f, err := bloom.New(make([]byte, (m+63)/64*8), m, k)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The positions are the words of the three digests, in order, reduced
// modulo m: the filter's memory has exactly those bits set (LSB first in
// each byte), for every k.
func TestHashWords(t *testing.T) {
	url := []byte("http://example.com/a")
	md, sh := md5.Sum(url), sha1.Sum(url)
	words := []uint32{crc32.ChecksumIEEE(url)}
	for i := range 4 {
		words = append(words, binary.BigEndian.Uint32(md[4*i:]))
	}
	for i := range 5 {
		words = append(words, binary.BigEndian.Uint32(sh[4*i:]))
	}
	const m = 1 << 20
	for k := 1; k <= bloom.MaxK; k++ {
		mem := make([]byte, m/8)
		f, err := bloom.New(mem, m, k)
		if err != nil {
			t.Fatal(err)
		}
		if f.TestAndSet(bloom.Hash(url, k)) {
			t.Fatalf("k %d: a first URL answered dup", k)
		}
		want := map[uint32]bool{}
		for _, w := range words[:k] {
			want[w%m] = true
		}
		for i := range uint32(m) {
			if got := mem[i/8]&(1<<(i%8)) != 0; got != want[i] {
				t.Fatalf("k %d: bit %d is %v, want %v", k, i, got, want[i])
			}
		}
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tt := range []struct {
		bytes int
		m     uint64
		k     int
	}{
		{1024, 8192, 0}, {1024, 8192, 11}, {1024, 8193, 3}, {1024, 32, 3}, {16, 1 << 33, 3},
	} {
		if _, err := bloom.New(make([]byte, tt.bytes), tt.m, tt.k); !errors.Is(err, bloom.ErrParams) {
			t.Errorf("New(%d bytes, m %d, k %d) = %v, want ErrParams", tt.bytes, tt.m, tt.k, err)
		}
	}
}

func TestTestAndSet(t *testing.T) {
	for _, m := range []uint64{80_000, 1 << 16} { // not a power of two, and one
		f := newFilter(t, m, 5)
		a, b := bloom.Hash([]byte("http://a/"), 5), bloom.Hash([]byte("http://b/"), 5)
		if f.Test(a) || f.TestAndSet(a) || !f.TestAndSet(a) || !f.Test(a) || f.Test(b) {
			t.Fatalf("m %d: a then a then b answered wrong", m)
		}
		if got := f.Fill(); got <= 0 || got > 5.0/float64(m)+1e-12 {
			t.Errorf("m %d: fill %g after one URL of 5 bits", m, got)
		}
	}
}

// The patent's experiment (n = 75,012 URLs, m = 80,000 and 8,000,000
// bits, k from the digests' combinations): the false-duplicate rate
// measured on 200,000 other URLs matches (1 − e^(−kn/m))^k within four
// standard deviations, and the same formula from the measured fill.
func TestFalseDupMatchesTheory(t *testing.T) {
	racetest.SkipSequential(t)
	const n, q = 75_012, 200_000
	for _, m := range []uint64{80_000, 8_000_000} {
		for _, k := range []int{1, 4, 5, 6, 9, 10} {
			f := newFilter(t, m, k)
			var buf []byte
			for i := range n {
				buf = fmt.Appendf(buf[:0], "http://site%d.example/page/%d", i%977, i)
				f.TestAndSet(bloom.Hash(buf, k))
			}
			dups := 0
			for i := range q {
				buf = fmt.Appendf(buf[:0], "http://other%d.example/q/%d", i%613, i)
				if f.Test(bloom.Hash(buf, k)) {
					dups++
				}
			}
			// Given the fill it has, a filter's next answer is a
			// binomial draw of rate fill^k; the fill itself is within
			// a fraction of a percent of its expectation, 1 − e^(−kn/m).
			p, pf := bloom.FalseDup(m, k, n), bloom.FalseDupFromFill(f.Fill(), k)
			mean, sd := pf*q, math.Sqrt(pf*(1-pf)*q)
			if math.Abs(float64(dups)-mean) > 4*sd+3 { // +3: a Poisson floor where the mean is ~0
				t.Errorf("m %d k %d: %d false duplicates of %d, fill^k %.1f ± %.1f", m, k, dups, q, mean, sd)
			}
			if math.Abs(pf-p) > 0.01*p+1e-9 {
				t.Errorf("m %d k %d: from fill %g, theory %g", m, k, pf, p)
			}
			t.Logf("m %d k %d: %d of %d (%.3g), fill^k %.3g, theory %.3g", m, k, dups, q, float64(dups)/q, pf, p)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	f := newFilter(t, 1<<20, 10)
	url := []byte("http://example.com/some/path?q=1")
	if n := testing.AllocsPerRun(1000, func() { f.TestAndSet(bloom.Hash(url, 10)) }); n != 0 {
		t.Errorf("Hash+TestAndSet: %v allocs", n)
	}
}
