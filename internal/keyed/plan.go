package keyed

import "fmt"

// NegligibleNotStored is what Plan calls negligible overflow: at the
// planned capacity, the chance that the next new URL finds both its
// buckets full and is not stored is at most 1e-4 (the URLs lost before it,
// all told, are then about 4e-6 of them; see Predict). A URL not stored is
// answered new, correctly, but so will its repeats be; past the capacity
// that chance rises fast (0.028 at 1.5×, 0.5 at 2× in the model).
const NegligibleNotStored = 1e-4

// Plan returns the smallest geometry (256 shards of a power-of-two size
// from MinShardBytes) in which, after capacity distinct URLs, the next new
// URL is reported a duplicate with chance at most falseDup and is not
// stored with chance at most NegligibleNotStored, by the model (Predict).
// It returns ErrCannotMeet when even MaxShardBytes per shard (the most the
// 64-bit hash addresses) cannot: 32-bit fingerprints then compare too many
// slots per URL for falseDup. It returns ErrPlan for a capacity of 0 or a
// rate outside (0, 1).
func Plan(capacity uint64, falseDup float64) (Geometry, error) {
	if capacity == 0 || !(falseDup > 0 && falseDup < 1) {
		return Geometry{}, fmt.Errorf("%w: capacity %d, false-duplicate rate %g", ErrPlan, capacity, falseDup)
	}
	var o Occupancy
	for sb := int64(MinShardBytes); sb <= MaxShardBytes; sb *= 2 {
		g, err := NewGeometry(sb)
		if err != nil {
			return Geometry{}, err
		}
		o = Predict(float64(capacity) / float64(uint64(g.Buckets())*Shards))
		if o.FalseDup() <= falseDup && o.NotStored() <= NegligibleNotStored {
			return g, nil
		}
	}
	return Geometry{}, fmt.Errorf("%w: %d URLs in %d GiB give a false-duplicate rate of %.3g and a not-stored rate of %.3g, asked %g",
		ErrCannotMeet, capacity, int64(MaxShardBytes)*Shards>>30, o.FalseDup(), o.NotStored(), falseDup)
}

// Capacity returns the distinct URLs g holds before the chance that the
// next new one is not stored reaches NegligibleNotStored, by the model:
// the capacity Plan sizes for, and the one stats measures a state against
// when it was not planned.
func (g Geometry) Capacity() uint64 {
	buckets := float64(uint64(g.Buckets()) * Shards)
	lo, hi := 0.0, float64(SlotsPerBucket) // URLs per bucket
	for range 40 {
		mid := (lo + hi) / 2
		if Predict(mid).NotStored() <= NegligibleNotStored {
			lo = mid
		} else {
			hi = mid
		}
	}
	return uint64(lo * buckets)
}
