package keyed

import "math"

// fpSpace is the number of fingerprint values a slot can hold: 2^32 − 1
// (0 is empty).
const fpSpace = 1<<32 - 1

// Occupancy is the distribution of buckets by how many slots they hold:
// Frac[k] is the fraction of buckets with k occupied slots. It comes from a
// table (Fill.Occupancy) or from the model (Predict).
type Occupancy struct {
	Frac [SlotsPerBucket + 1]float64
	// Lost is the expected fraction of the URLs inserted so far that were
	// not stored (from Predict; 0 from a Fill, which cannot know).
	Lost float64
}

// Mean returns the mean number of occupied slots per bucket.
func (o Occupancy) Mean() float64 {
	m := 0.0
	for k, f := range o.Frac {
		m += float64(k) * f
	}
	return m
}

// FullFrac returns the fraction of full buckets.
func (o Occupancy) FullFrac() float64 { return o.Frac[SlotsPerBucket] }

// Compared returns the expected number of fingerprints a new URL is
// compared with: every occupied slot of b1 (a scan stops at the first
// empty slot), and of b2 when b1 is full. b2 is another bucket chosen by
// the fingerprint, independent of b1's occupancy.
func (o Occupancy) Compared() float64 { return o.Mean() * (1 + o.FullFrac()) }

// FalseDup returns the chance that the next new URL is reported a
// duplicate: each fingerprint compared equals its own with chance 1/(2^32−1),
//
//	P(false dup) = 1 − (1 − 2^−32)^compared ≈ mean·(1 + full)/2^32
//
// where mean is the mean bucket occupancy and full the fraction of full
// buckets.
func (o Occupancy) FalseDup() float64 { return o.falseDup(fpSpace) }

// falseDup is FalseDup for fingerprints of space values.
func (o Occupancy) falseDup(space float64) float64 {
	return -math.Expm1(o.Compared() * math.Log1p(-1/space))
}

// NotStored returns the chance that the next new URL finds both its
// buckets full and is not stored: full².
func (o Occupancy) NotStored() float64 { f := o.FullFrac(); return f * f }

// Predict returns the expected occupancy after load new URLs per bucket
// (URLs inserted / (256 × buckets per shard)) have been decided, in the
// fluid limit of many buckets: a bucket with k < 16 slots gains one at rate
// 1 (it is some URL's b1) plus full (it is the b2 of a URL whose b1 is
// full), so
//
//	df₀/dt = −(1+f₁₆)·f₀,  dfₖ/dt = (1+f₁₆)·(fₖ₋₁ − fₖ),  df₁₆/dt = (1+f₁₆)·f₁₅
//
// and a URL is lost at rate f₁₆². Integrated by RK4 in steps of 1/64 URL
// per bucket; the law of large numbers makes it exact as buckets grow
// (2^23 or more in any state; see TestModelMatchesTable).
func Predict(load float64) Occupancy {
	var y [SlotsPerBucket + 2]float64 // fractions 0..16, then lost URLs per bucket
	y[0] = 1
	if load <= 0 {
		return occupancy(y, 0)
	}
	const h = 1.0 / 64
	span := min(load, saturated)
	steps := int(math.Ceil(span / h))
	dt := span / float64(steps)
	var k1, k2, k3, k4, tmp [SlotsPerBucket + 2]float64
	for range steps {
		deriv(&y, &k1)
		axpy(&tmp, &y, &k1, dt/2)
		deriv(&tmp, &k2)
		axpy(&tmp, &y, &k2, dt/2)
		deriv(&tmp, &k3)
		axpy(&tmp, &y, &k3, dt)
		deriv(&tmp, &k4)
		for i := range y {
			y[i] += dt / 6 * (k1[i] + 2*k2[i] + 2*k3[i] + k4[i])
		}
	}
	// Past saturation every bucket is full (to double precision) and every
	// further URL is lost.
	y[SlotsPerBucket+1] += (load - span) * y[SlotsPerBucket] * y[SlotsPerBucket]
	return occupancy(y, load)
}

// saturated is a load past which the model's buckets are all full: at 64
// URLs a bucket the fraction not full is below 1e-16.
const saturated = 4 * SlotsPerBucket

func occupancy(y [SlotsPerBucket + 2]float64, load float64) Occupancy {
	var o Occupancy
	copy(o.Frac[:], y[:SlotsPerBucket+1])
	if load > 0 {
		o.Lost = y[SlotsPerBucket+1] / load
	}
	return o
}

func deriv(y, d *[SlotsPerBucket + 2]float64) {
	const F = SlotsPerBucket
	r := 1 + y[F]
	d[0] = -r * y[0]
	for k := 1; k < F; k++ {
		d[k] = r * (y[k-1] - y[k])
	}
	d[F] = r * y[F-1]
	d[F+1] = y[F] * y[F]
}

func axpy(dst, y, d *[SlotsPerBucket + 2]float64, a float64) {
	for i := range dst {
		dst[i] = y[i] + a*d[i]
	}
}
