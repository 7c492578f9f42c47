package mdbf_test

import (
	"fmt"

	"github.com/urldedupd/urldedupd/internal/mdbf"
)

// The paper's filter of k = 4 and N = 150 bits, in S = 4 groups.
func Example() {
	p := mdbf.Params{S: 4, N: 150, K: 4}
	f, _ := mdbf.New(p)
	fmt.Println(f.TestAndSet(mdbf.HashOf([]byte("http://a.example/"))), f.TestAndSet(mdbf.HashOf([]byte("http://a.example/"))))
	fmt.Printf("%d bits; after 20 URLs %.1e\n", p.Bits(), p.FalsePositive(20))
	// Output:
	// false true
	// 748 bits; after 20 URLs 4.4e-04
}
