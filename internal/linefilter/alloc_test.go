package linefilter_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/urldedupd/urldedupd/internal/linefilter"
	"github.com/urldedupd/urldedupd/internal/racetest"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// The one loop allocates nothing per line. At depth 0 (a local state) a
// Run over 200,000 lines allocates what a Run over 2,000 does (its
// goroutine, channels and window), give or take a few; with batches in
// flight, the window's map of signatures in flight grows now and then, but
// far less than once per batch of 1,024 lines.
func TestFilterAllocationsPerRunOnly(t *testing.T) {
	// Run's goroutines are raced by TestFilterInFlightSameAnswers.
	racetest.SkipAllocations(t)
	lines := func(n int) []byte {
		var b bytes.Buffer
		for i := range n {
			fmt.Fprintf(&b, "http://alloc%d.example.com/p/%d\n", i%97, i)
		}
		return b.Bytes()
	}
	small, big := lines(2_000), lines(200_000)
	set := newSet(t)
	for _, n := range []int{0, 4} {
		f := &linefilter.Filter{State: inFlight(set, n), Signer: signature.NewSigner(signature.IEEE, signature.Safe), Output: linefilter.Mark}
		run := func(data []byte) func() {
			return func() {
				if err := f.Run(context.Background(), io.Discard, bytes.NewReader(data), "x"); err != nil {
					t.Fatal(err)
				}
			}
		}
		run(big)() // the blocks are made once
		a, b := testing.AllocsPerRun(5, run(small)), testing.AllocsPerRun(5, run(big))
		if slack := map[int]float64{0: 8, 4: 200_000 / linefilter.BatchSize}[n]; b > a+slack {
			t.Errorf("in flight %d: %v allocations for 200,000 lines, %v for 2,000: something is allocated per line or batch", n, b, a)
		}
	}
}
