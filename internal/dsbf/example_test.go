package dsbf_test

import (
	"fmt"

	"github.com/urldedupd/urldedupd/internal/dsbf"
)

// Plan a tree for 10,000 URLs in leaves of 64 Kibit at 1%, then give it
// ten times as many: it splits, and its false-positive rate stays under 1%.
func Example() {
	p, _ := dsbf.Plan(10_000, 1<<16, 0.01)
	tr, _ := dsbf.New(p)
	fmt.Println("first:", tr.TestAndSet(dsbf.HashOf([]byte("http://a.example/"))))
	fmt.Println("again:", tr.TestAndSet(dsbf.HashOf([]byte("http://a.example/"))))
	for i := range 100_000 {
		tr.TestAndSet(dsbf.HashOf(fmt.Appendf(nil, "http://example.com/%d", i)))
	}
	s := tr.Shape()
	fmt.Println("split:", s.Height > 1, "under 1%:", tr.FalsePositive() < 0.01)
	// Output:
	// first: false
	// again: true
	// split: true under 1%: true
}
