package metrics

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// key is a series' label values (at most two).
type key [2]string

// CounterVec is a counter by up to two labels, added to as events happen.
type CounterVec struct {
	name, help string
	labels     []string
	mu         sync.Mutex
	series     map[key]*atomic.Uint64
}

// NewCounterVec returns a counter family name labelled by labels (at most
// two).
func NewCounterVec(name, help string, labels ...string) *CounterVec {
	return &CounterVec{name: name, help: help, labels: labels, series: map[key]*atomic.Uint64{}}
}

// Add adds n to the series of the label values given.
func (c *CounterVec) Add(n uint64, values ...string) {
	var k key
	copy(k[:], values)
	c.mu.Lock()
	s := c.series[k]
	if s == nil {
		s = new(atomic.Uint64)
		c.series[k] = s
	}
	c.mu.Unlock()
	s.Add(n)
}

// Collect writes the family, its series sorted by label values.
func (c *CounterVec) Collect(w *Writer) {
	w.Family(c.name, Counter, c.help)
	c.mu.Lock()
	keys := sortedKeys(c.series)
	vals := make([]uint64, len(keys))
	for i, k := range keys {
		vals[i] = c.series[k].Load()
	}
	c.mu.Unlock()
	for i, k := range keys {
		w.Sample(c.name, float64(vals[i]), labelPairs(c.labels, k, nil)...)
	}
}

// HistogramVec is a histogram by one label.
type HistogramVec struct {
	name, help string
	label      string
	bounds     []float64
	mu         sync.Mutex
	series     map[key]*histogram
}

type histogram struct {
	counts []atomic.Uint64 // one a bound, then +Inf
	sum    atomic.Uint64   // float64 bits
}

// NewHistogramVec returns a histogram family with the upper bounds given,
// labelled by label.
func NewHistogramVec(name, help string, bounds []float64, label string) *HistogramVec {
	return &HistogramVec{name: name, help: help, label: label, bounds: bounds, series: map[key]*histogram{}}
}

// ExponentialBuckets returns n bounds: start, start·factor, …
func ExponentialBuckets(start, factor float64, n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		b[i] = start
		start *= factor
	}
	return b
}

// Observe adds v to the series of the label value given.
func (h *HistogramVec) Observe(v float64, value string) {
	k := key{value}
	h.mu.Lock()
	s := h.series[k]
	if s == nil {
		s = &histogram{counts: make([]atomic.Uint64, len(h.bounds)+1)}
		h.series[k] = s
	}
	h.mu.Unlock()
	i, _ := slices.BinarySearch(h.bounds, v) // the first bound >= v
	s.counts[i].Add(1)
	for {
		old := s.sum.Load()
		if s.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			break
		}
	}
}

// Collect writes the family: cumulative buckets, sum and count per series.
func (h *HistogramVec) Collect(w *Writer) {
	w.Family(h.name, Histogram, h.help)
	h.mu.Lock()
	keys := sortedKeys(h.series)
	ss := make([]*histogram, len(keys))
	for i, k := range keys {
		ss[i] = h.series[k]
	}
	h.mu.Unlock()
	for i, k := range keys {
		var cum uint64
		for j := range ss[i].counts {
			cum += ss[i].counts[j].Load()
			le := math.Inf(1)
			if j < len(h.bounds) {
				le = h.bounds[j]
			}
			w.Sample(h.name+"_bucket", float64(cum), h.label, k[0], "le", string(appendFloat(nil, le)))
		}
		w.Sample(h.name+"_sum", math.Float64frombits(ss[i].sum.Load()), h.label, k[0])
		w.Sample(h.name+"_count", float64(cum), h.label, k[0])
	}
}

func sortedKeys[V any](m map[key]V) []key {
	keys := make([]key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	return keys
}

// labelPairs makes name, value pairs of names and k, then extra.
func labelPairs(names []string, k key, extra []string) []string {
	p := make([]string, 0, 2*len(names)+len(extra))
	for i, n := range names {
		p = append(p, n, k[i])
	}
	return append(p, extra...)
}
