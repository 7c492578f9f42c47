package compare

import (
	"math"
	"testing"
)

// Wilson intervals against values computed independently
// (Python, from the score formula).
func TestInterval(t *testing.T) {
	for _, tt := range []struct {
		hits, n uint64
		lo, hi  float64
	}{
		{0, 1000, 0, 0.003827},
		{10, 1000, 0.005441, 0.018309},
		{500, 1000, 0.469070, 0.530930},
		{1000, 1000, 0.996173, 1},
	} {
		lo, hi := Rate{tt.hits, tt.n}.Interval()
		if math.Abs(lo-tt.lo) > 2e-6 || math.Abs(hi-tt.hi) > 2e-6 {
			t.Errorf("%d/%d: [%f, %f], want [%f, %f]", tt.hits, tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
}
