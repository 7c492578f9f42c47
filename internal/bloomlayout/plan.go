package bloomlayout

import (
	"fmt"
	"math"

	bloomf "github.com/urldedupd/urldedupd/internal/bloom"
	"github.com/urldedupd/urldedupd/internal/dsbf"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	mdbff "github.com/urldedupd/urldedupd/internal/mdbf"
)

// Defaults of the Bloom family's parameters, where neither the caller nor
// a plan chooses them.
const (
	DefaultBloomK   = 4
	DefaultGroups   = 4
	DefaultMDBFK    = 4
	DefaultChildren = 3
	DefaultFMax     = 0.01
)

// Plan chooses a Bloom-family state's size and parameters: those
// asked, the rest from the plan (Capacity, FalseDup) when there is one,
// else the defaults; a plan that cannot be met is layout.ErrPlan.
func (f family) Plan(i layout.Plan, m *format.Meta) error {
	sizes := []int64{m.Sizes.ShardBytes}
	if i.Size == 0 && i.Capacity != 0 {
		sizes = sizes[:0]
		for b := int64(format.MinFilterShardBytes); b <= format.ShardBytes; b *= 2 {
			sizes = append(sizes, b)
		}
	}
	var best float64
	var bad error
	for _, b := range sizes {
		m.Sizes.ShardBytes = b
		f, p := filterFor(i, m.Spec.Layout, uint64(b)*8*format.Shards)
		m.Filter, best = f, p
		if bad = m.Spec.Layout.CheckFilter(f, m.Sizes); bad != nil {
			continue // parameters asked that fit a larger state only, or none
		}
		if i.Capacity == 0 || p <= i.FalseDup {
			return nil
		}
	}
	if bad != nil {
		return fmt.Errorf("%w: %w", layout.ErrPlan, bad)
	}
	return fmt.Errorf("%w: layout %s: %d URLs at a false-duplicate chance of %g: the best in %d MiB is %.3g", layout.ErrPlan,
		m.Spec.Layout.Name(), i.Capacity, i.FalseDup, m.Sizes.Bytes()>>20, best)
}

// filterFor returns the parameters of layout l in a state of the given
// bits, and the false-duplicate chance they give at the plan's capacity
// (0 without a plan).
func filterFor(i layout.Plan, l format.Layout, stateBits uint64) (format.Filter, float64) {
	f, n := i.Filter, i.Capacity
	switch l {
	case format.Bloom:
		if f.K == 0 && n != 0 {
			f.K = max(1, min(10, int(math.Round(float64(stateBits)/float64(n)*math.Ln2))))
		}
		if f.K == 0 {
			f.K = DefaultBloomK
		}
		return f, bloomf.FalseDup(stateBits, f.K, n)
	case format.MDBF:
		f.Groups = cmp0(f.Groups, DefaultGroups)
		f.K = cmp0(f.K, DefaultMDBFK)
		if f.V1Bits == 0 && f.K > 0 && f.Groups > 0 {
			per := stateBits / uint64(f.Groups)
			unit := 64 * uint64(f.K)
			f.V1Bits = per * uint64(f.K) / uint64(f.K+1) / unit * unit
		}
		if f.K < 2 || f.V1Bits == 0 {
			return f, 1
		}
		p := mdbff.Params{S: f.Groups, N: f.V1Bits, K: f.K}
		return f, p.FalsePositive(n)
	case format.DSBF:
		if f.FMax == 0 {
			f.FMax = DefaultFMax
			if n != 0 {
				f.FMax = i.FalseDup
			}
		}
		leafBits := stateBits/format.Shards - format.LeafHeaderBytes*8
		if n != 0 {
			if p, err := dsbf.Plan(n, leafBits, f.FMax); err == nil {
				f.Children = cmp0(f.Children, min(p.C, format.MaxChildren))
				f.K = cmp0(f.K, p.K)
			}
		}
		f.Children = cmp0(f.Children, DefaultChildren)
		if f.K == 0 {
			if p, err := dsbf.Plan(1, leafBits, f.FMax); err == nil {
				f.K = p.K
			}
		}
		if n == 0 {
			return f, 0
		}
		return f, dsbfAt(f, int64(stateBits/8/format.Shards), n)
	}
	return f, 1
}

// dsbfAt is the bound on the false-duplicate chance of a DSBF of f in
// shards of shardBytes after n URLs: FMax while the tree holds them within
// its bounds (Tree.Capacity), 1 past that.
func dsbfAt(f format.Filter, shardBytes int64, n uint64) float64 {
	m := format.Meta{Sizes: format.Sizes{Shards: format.Shards, ShardBytes: shardBytes}, Filter: f}
	if n > NewTree(m).Capacity() {
		return 1
	}
	return f.FMax
}

func cmp0(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
