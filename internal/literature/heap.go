package literature

import (
	"context"
	"math"
	"math/rand/v2"
	"time"
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/bloomlayout"
	"github.com/urldedupd/urldedupd/internal/compare"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// filter is a Bloom-family layout in this process's memory: the same
// decisions as a state directory's (internal/bloomlayout), without the files.
type filter struct {
	set  *bloomlayout.Set
	meta format.Meta
}

func newFilter(l format.Layout, shardBytes int64, f format.Filter) (*filter, error) {
	k := signature.Key{0x13}
	asked := format.NewMeta(format.Spec{Layout: l, Algorithm: signature.SipHash, Mode: signature.Safe}, time.Now())
	asked.Sizes.ShardBytes, asked.Filter, asked.Key = shardBytes, f, &k
	m, err := format.Creating(&asked.Spec, &asked, time.Now())
	if err != nil {
		return nil, err
	}
	words := make([]uint64, int64(format.Shards)*shardBytes/8)
	all := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)
	shards := make([][]byte, format.Shards)
	for i := range shards {
		shards[i] = all[int64(i)*shardBytes : int64(i+1)*shardBytes : int64(i+1)*shardBytes]
	}
	s, err := bloomlayout.New(m, shards, bloomlayout.Options{})
	if err != nil {
		return nil, err
	}
	return &filter{set: s, meta: m}, nil
}

// sigs are n random signatures: what SipHash-1-3 under a secret key makes
// of distinct URLs.
func sigs(r *rand.Rand, n int) []signature.Signature {
	s := make([]signature.Signature, n)
	for i := range s {
		s[i] = signature.Signature(r.Uint64())
	}
	return s
}

// rate is the share of held reported present (dry run).
func (f *filter) rate(held []signature.Signature) (compare.Rate, error) {
	seen := make([]bool, len(held))
	if err := f.set.Decide(context.Background(), held, seen, true); err != nil {
		return compare.Rate{}, err
	}
	r := compare.Rate{Trials: uint64(len(held))}
	for _, s := range seen {
		if s {
			r.Hits++
		}
	}
	return r, nil
}

func (f *filter) insert(in []signature.Signature) error {
	return f.set.Decide(context.Background(), in, make([]bool, len(in)), false)
}

// growth inserts n URLs into f in steps, measuring the rate on held at
// each of the points (URL counts, ascending), with theory(f) beside it.
func (f *filter) growth(r *rand.Rand, points []uint64, held []signature.Signature, theory func(*filter, uint64) float64) ([]compare.Point, error) {
	var out []compare.Point
	var done uint64
	for _, p := range points {
		if err := f.insert(sigs(r, int(p-done))); err != nil {
			return nil, err
		}
		done = p
		rate, err := f.rate(held)
		if err != nil {
			return nil, err
		}
		out = append(out, compare.Point{Inserted: p, Rate: rate, Theory: theory(f, p)})
	}
	return out, nil
}

// reported is the layout's own formula on the filter as measured.
func reported(f *filter, _ uint64) float64 {
	rep, err := f.set.Report()
	if err != nil {
		return 0
	}
	return rep.FalseDup
}

// Points returns about perDecade points a decade from lo to hi.
func Points(lo, hi uint64, perDecade int) []uint64 {
	var out []uint64
	for x := float64(lo); ; x *= math.Pow(10, 1/float64(perDecade)) {
		p := uint64(x)
		if p >= hi {
			return append(out, hi)
		}
		if len(out) == 0 || p > out[len(out)-1] {
			out = append(out, p)
		}
	}
}
