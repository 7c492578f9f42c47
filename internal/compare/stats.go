package compare

import "math"

// Rate is a measured proportion: Hits of Trials.
type Rate struct {
	Hits, Trials uint64
}

// Value is Hits/Trials (0 for no trials).
func (r Rate) Value() float64 {
	if r.Trials == 0 {
		return 0
	}
	return float64(r.Hits) / float64(r.Trials)
}

// Interval is the 95% Wilson score interval of the rate: valid at 0 hits
// (where the normal approximation is not), where it runs from 0 to about
// 3.84/Trials.
func (r Rate) Interval() (lo, hi float64) {
	if r.Trials == 0 {
		return 0, 1
	}
	const z = 1.959963984540054
	n, p := float64(r.Trials), r.Value()
	den := 1 + z*z/n
	mid := (p + z*z/(2*n)) / den
	half := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / den
	return math.Max(0, mid-half), math.Min(1, mid+half)
}
