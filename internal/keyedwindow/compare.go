package keyedwindow

import (
	"fmt"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/window"
)

// CompareState: the largest bucket area of 256 shards of a power of two
// that fits memory, and at least the smallest, 512 MiB, as the keyed
// layout's (layout.Contender).
func (keyedWindow) CompareState(memory int64, _ uint64) (format.Spec, int64, format.Filter) {
	size := int64(format.Shards * keyed.MinShardBytes)
	for size*2 <= min(memory, format.Shards*keyed.MaxShardBytes) {
		size *= 2
	}
	return format.Spec{Layout: format.KeyedWindow, Algorithm: signature.SipHash, Mode: signature.Safe}, size, format.Filter{}
}

// CompareWindow is the window compare gives it: a year in 6 generations,
// so that a comparison, which has no time, measures the table with its
// 26-bit fingerprints and generation tags (layout.WindowContender).
func (keyedWindow) CompareWindow() window.Spec {
	return window.Spec{Window: 365 * 24 * time.Hour, Generations: 6, Policy: window.FirstSeen}
}

// CompareInfo describes a windowed keyed state for compare's table.
func (keyedWindow) CompareInfo(m format.Meta, _ func() (layout.Report, error)) (string, int64, string) {
	return fmt.Sprintf("SipHash-1-3, 26-bit fingerprints and 6-bit generation tags, 32-slot buckets, %d MiB shards, window %s in %d generations",
			(m.Sizes.ShardBytes-HeaderBytes)>>20, window.FormatDuration(m.Window.Window), m.Window.Generations),
		m.Sizes.Bytes(), "yes: a lock a batch (a lock file)"
}

// Theory is the model's false-duplicate chance with n URLs live
// (window.KeyedFalseDup).
func (keyedWindow) Theory(m format.Meta, n uint64, _ func() (layout.Report, error)) float64 {
	return window.KeyedFalseDup(float64(n), float64((m.Sizes.ShardBytes-HeaderBytes)/4*format.Shards))
}

var (
	_ layout.Contender       = keyedWindow{}
	_ layout.WindowContender = keyedWindow{}
)
