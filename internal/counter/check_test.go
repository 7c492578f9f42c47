package counter_test

import (
	"testing"

	"github.com/urldedupd/urldedupd/internal/audit"
	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/counter"
	"github.com/urldedupd/urldedupd/internal/daemon"
	"github.com/urldedupd/urldedupd/internal/inflight"
	"github.com/urldedupd/urldedupd/internal/linefilter"
	"github.com/urldedupd/urldedupd/internal/quic"
	"github.com/urldedupd/urldedupd/internal/state"
)

// Every stats type's table describes each of its counters once.
func TestTablesCoverTheirTypes(t *testing.T) {
	for _, err := range []error{
		counter.Check(capture.StatsCounters(), "Reasons"),
		counter.Check(capture.AssemblerStatsCounters, "NonHTTP"),
		counter.Check(capture.NonHTTPCountsCounters()),
		counter.Check(capture.DefragStatsCounters),
		counter.Check(capture.TLSStatsCounters),
		counter.Check(capture.H2CStatsCounters),
		counter.Check(capture.QUICStatsCounters()),
		counter.Check(quic.StatsCounters),
		counter.Check(audit.CountsCounters),
		counter.Check(linefilter.StatsCounters),
		counter.Check(inflight.StatsCounters),
		counter.Check(state.CacheStatsCounters),
		counter.Check(daemon.EventLogStatsCounters),
	} {
		if err != nil {
			t.Error(err)
		}
	}
}

type pair struct{ A, B uint64 }

// Check finds a counter without a description, and one described twice.
func TestCheckFails(t *testing.T) {
	if counter.Check(counter.Table[pair]{{Name: "a", Field: func(p *pair) *uint64 { return &p.A }}}) == nil {
		t.Error("B has no description, and Check said nothing")
	}
	if counter.Check(counter.Table[pair]{
		{Name: "a", Field: func(p *pair) *uint64 { return &p.A }},
		{Name: "b", Field: func(p *pair) *uint64 { return &p.A }},
	}) == nil {
		t.Error("A is described twice and B not at all, and Check said nothing")
	}
}

// Add sums, or keeps the larger for a Max counter.
func TestAdd(t *testing.T) {
	tab := counter.Table[pair]{
		{Name: "a", Field: func(p *pair) *uint64 { return &p.A }},
		{Name: "b", Merge: counter.Max, Field: func(p *pair) *uint64 { return &p.B }},
	}
	x, y := pair{1, 5}, pair{2, 3}
	tab.Add(&x, &y)
	if x != (pair{3, 5}) {
		t.Errorf("Add: %+v, want {3 5}", x)
	}
}
