package literature_test

import (
	"fmt"

	"github.com/urldedupd/urldedupd/internal/literature"
)

// The MDBF paper's filter against a Bloom filter of the same bits, at its
// size (N = 150, k = 4, 30 URLs), over 2,000 fresh filters each.
func ExampleMDBFRate() {
	mdbf := literature.MDBFCase{S: 4, N: 150, K: 4}
	bloom := literature.MDBFCase{M: mdbf.Bits(), K: 4}
	for _, c := range []literature.MDBFCase{mdbf, bloom} {
		r, err := literature.MDBFRate(c, 30, 2000, 100, 1)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %.1g\n", c.Name(), r.Value())
	}
	// Output:
	// MDBF S=4, N=150, k=4 (748 bits): 0.003
	// Bloom filter, 748 bits, k=4: 0.0005
}
