package keyed

import (
	"fmt"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// CompareState: the largest keyed state of 256 shards of a power of two
// that fits memory, and at least the smallest, 512 MiB
// (layout.Contender).
func (keyedLayout) CompareState(memory int64, _ uint64) (format.Spec, int64, format.Filter) {
	size := int64(format.Shards * format.ShardBytes)
	for size*2 <= min(memory, format.Shards*format.MaxShardBytes) {
		size *= 2
	}
	return format.Spec{Layout: format.Keyed, Algorithm: signature.SipHash, Mode: signature.Safe}, size, format.Filter{}
}

// CompareInfo describes a keyed state for compare's table.
func (keyedLayout) CompareInfo(m format.Meta, _ func() (layout.Report, error)) (string, int64, string) {
	return fmt.Sprintf("SipHash-1-3, 32-bit fingerprints, 16-slot buckets, %d MiB shards", m.Sizes.ShardBytes>>20),
		m.Sizes.Bytes(), "yes: one atomic operation"
}

// Theory is the model's false-duplicate chance at n URLs (Predict).
func (keyedLayout) Theory(m format.Meta, n uint64, _ func() (layout.Report, error)) float64 {
	g, _ := NewGeometry(m.Sizes.ShardBytes)
	return Predict(float64(n) / float64(uint64(g.Buckets())*Shards)).FalseDup()
}

var _ layout.Contender = keyedLayout{}
