package state_test

import (
	"errors"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// The Bloom family's plans: what is asked is kept, what is not is chosen
// (from the capacity when given), and what cannot be is ErrPlan.
func TestFilterPlan(t *testing.T) {
	spec := func(l format.Layout) format.Spec {
		return format.Spec{Layout: l, Algorithm: signature.SipHash, Mode: signature.Safe}
	}
	tests := []struct {
		name string
		in   state.Init
		want format.Filter
		size int64 // state bytes; 0: not checked
		err  bool
	}{
		{"bloom defaults", state.Init{Spec: spec(format.Bloom)}, format.Filter{K: 4}, 512 << 20, false},
		{"bloom planned", state.Init{Spec: spec(format.Bloom), Capacity: 1_000_000, FalseDup: 1e-4}, format.Filter{K: 10}, 4 << 20, false},
		{"bloom k 11", state.Init{Spec: spec(format.Bloom), Filter: format.Filter{K: 11}}, format.Filter{}, 0, true},
		{"bloom unmeetable", state.Init{Spec: spec(format.Bloom), Capacity: 1 << 40, FalseDup: 1e-9}, format.Filter{}, 0, true},
		{"mdbf defaults 1MiB", state.Init{Spec: spec(format.MDBF), Size: 1 << 20}, format.Filter{K: 4, Groups: 4, V1Bits: 1677568}, 1 << 20, false},
		{"mdbf v1 given, sized by plan", state.Init{Spec: spec(format.MDBF), Capacity: 1_000_000, FalseDup: 0.01, Filter: format.Filter{V1Bits: 25_600_000}},
			format.Filter{K: 4, Groups: 4, V1Bits: 25_600_000}, 16 << 20, false},
		{"mdbf v1 not whole words", state.Init{Spec: spec(format.MDBF), Size: 1 << 20, Filter: format.Filter{V1Bits: 1000}}, format.Filter{}, 0, true},
		{"dsbf defaults", state.Init{Spec: spec(format.DSBF), Size: 1 << 20}, format.Filter{K: 8, Children: 3, FMax: 0.01}, 1 << 20, false},
		{"dsbf planned", state.Init{Spec: spec(format.DSBF), Capacity: 10_000_000, FalseDup: 1e-3}, format.Filter{K: 11, Children: 10, FMax: 1e-3}, 512 << 20, false},
		{"dsbf 17 children", state.Init{Spec: spec(format.DSBF), Filter: format.Filter{Children: 17}}, format.Filter{}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := tt.in.Meta(time.Now())
			if tt.err {
				if !errors.Is(err, state.ErrPlan) {
					t.Fatalf("Meta = %+v, %v; want ErrPlan", m.Filter, err)
				}
				return
			}
			if err != nil || m.Filter != tt.want || tt.size != 0 && m.Sizes.Bytes() != tt.size || m.Key == nil {
				t.Fatalf("Meta = %+v, %d bytes, key %v, %v; want %+v, %d bytes", m.Filter, m.Sizes.Bytes(), m.Key != nil, err, tt.want, tt.size)
			}
			if _, err := format.Creating(&m.Spec, &m, time.Now()); err != nil {
				t.Fatalf("the plan is not a state: %v", err)
			}
		})
	}
}
