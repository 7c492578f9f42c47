package compare

import (
	"fmt"
	"hash/maphash"
	"math"

	"github.com/urldedupd/urldedupd/internal/apbf"
)

// apbfC is the Age-Partitioned Bloom Filter of Shtul, Baquero and
// Almeida in memory, the anchor of the windowed layouts: k = 6 slices
// an element is inserted in and l = 6 more it outlives its insertion by
// (a window of 6 generations), each slice a twelfth of memory. A
// comparison has no time, so it never shifts: its false duplicates are
// those of k slices of memory/12 bits.
type apbfC struct {
	f    *apbf.Filter
	seed maphash.Seed
}

const apbfK, apbfL = 6, 6

func newAPBF(memory int64, _ uint64) (*apbfC, error) {
	f, err := apbf.New(apbfK, apbfL, uint64(memory)*8/(apbfK+apbfL))
	if err != nil {
		return nil, err
	}
	return &apbfC{f: f, seed: maphash.MakeSeed()}, nil
}

func (c *apbfC) info() Info {
	return Info{Layout: "apbf", Params: fmt.Sprintf("k=%d, l=%d slices of %d bits (Shtul et al.; a window of %d generations)", c.f.K(), c.f.L(), c.f.Bits()/uint64(c.f.K()+c.f.L()), c.f.L()),
		Bytes: int64(c.f.Bits() / 8), ExactlyOnce: "no (one process's memory)"}
}

func (c *apbfC) decide(urls [][]byte, seen []bool, dryRun bool) error {
	for i, u := range urls {
		h := maphash.Bytes(c.seed, u)
		seen[i] = c.f.Query(h)
		if !dryRun && !seen[i] {
			c.f.Insert(h)
		}
	}
	return nil
}

// theory: an element is found when its bit is set in each of the k
// youngest slices, each holding all n elements: (1 − e^(−n/m))^k.
func (c *apbfC) theory(n uint64) float64 {
	m := float64(c.f.Bits()) / float64(c.f.K()+c.f.L())
	return math.Pow(-math.Expm1(-float64(n)/m), float64(c.f.K()))
}

func (c *apbfC) close() error { return nil }
