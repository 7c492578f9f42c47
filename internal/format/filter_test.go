package format_test

import (
	"errors"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
)

func filterMeta(l format.Layout, shardBytes int64, f format.Filter) format.Meta {
	m := format.NewMeta(format.Spec{Layout: l, Algorithm: signature.SipHash, Mode: signature.Safe},
		time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	m.Sizes.ShardBytes, m.Filter = shardBytes, f
	k := signature.Key{7}
	m.Key = &k
	return m
}

// TestFilterMeta: the Bloom family's parameters survive the metadata
// file, and what a layout cannot have is refused, when created and when
// read.
func TestFilterMeta(t *testing.T) {
	tests := []struct {
		name string
		l    format.Layout
		size int64
		f    format.Filter
		ok   bool
	}{
		{"bloom k4", format.Bloom, 4 << 10, format.Filter{K: 4}, true},
		{"bloom 512MiB k10", format.Bloom, 2 << 20, format.Filter{K: 10}, true},
		{"bloom k11", format.Bloom, 4 << 10, format.Filter{K: 11}, false},
		{"bloom k0", format.Bloom, 4 << 10, format.Filter{}, false},
		{"bloom 4MiB shards", format.Bloom, 4 << 20, format.Filter{K: 4}, false},
		{"bloom 2KiB shards", format.Bloom, 2 << 10, format.Filter{K: 4}, false},
		{"bloom with groups", format.Bloom, 4 << 10, format.Filter{K: 4, Groups: 2, V1Bits: 256}, false},
		{"mdbf", format.MDBF, 4 << 10, format.Filter{K: 4, Groups: 4, V1Bits: 1 << 16}, true},
		{"mdbf v1 not 64k", format.MDBF, 4 << 10, format.Filter{K: 4, Groups: 4, V1Bits: 1000}, false},
		{"mdbf too big", format.MDBF, 4 << 10, format.Filter{K: 4, Groups: 8, V1Bits: 1 << 20}, false},
		{"mdbf k1", format.MDBF, 4 << 10, format.Filter{K: 1, Groups: 1, V1Bits: 64}, false},
		{"dsbf", format.DSBF, 64 << 10, format.Filter{K: 7, Children: 3, FMax: 0.01}, true},
		{"dsbf one child", format.DSBF, 64 << 10, format.Filter{K: 7, Children: 1, FMax: 0.01}, false},
		{"dsbf fmax 1", format.DSBF, 64 << 10, format.Filter{K: 7, Children: 3, FMax: 1}, false},
		{"keyed with k", format.Keyed, 2 << 20, format.Filter{K: 3}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked := filterMeta(tt.l, tt.size, tt.f)
			m, err := format.Creating(&asked.Spec, &asked, asked.Created)
			if (err == nil) != tt.ok {
				t.Fatalf("Creating = %v, want ok %v", err, tt.ok)
			}
			if err != nil {
				if !errors.Is(err, format.ErrLayout) {
					t.Fatalf("Creating = %v, want ErrLayout", err)
				}
				return
			}
			text, _ := m.MarshalText()
			var back format.Meta
			if err := back.UnmarshalText(text); err != nil {
				t.Fatalf("UnmarshalText(%s) = %v", text, err)
			}
			if back.Filter != tt.f || back.Spec != m.Spec || back.KeyID != m.KeyID || back.Sizes != m.Sizes {
				t.Fatalf("round trip: %+v, want %+v", back, m)
			}
			other := back
			other.Filter.K++
			if err := back.Compatible(other); !errors.Is(err, format.ErrMismatch) {
				t.Fatalf("Compatible(other k) = %v", err)
			}
		})
	}
}
