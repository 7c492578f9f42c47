package bitcheck

import (
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
)

// CompareState: compare measures the default state, the patent's
// (layout.Contender).
func (bitmap) CompareState(int64, uint64) (format.Spec, int64, format.Filter) {
	return format.Default, 0, format.Filter{}
}

// CompareInfo describes a bitmap for compare's table.
func (bitmap) CompareInfo(m format.Meta, _ func() (layout.Report, error)) (string, int64, string) {
	return "CRC32, 1 bit per signature", m.Sizes.Bytes(), "yes: one atomic operation"
}

// Theory is FalseDup(n).
func (bitmap) Theory(_ format.Meta, n uint64, _ func() (layout.Report, error)) float64 {
	return FalseDup(n)
}

var _ layout.Contender = bitmap{}
