package state

import (
	"context"

	"github.com/urldedupd/urldedupd/internal/bitcheck"
	"github.com/urldedupd/urldedupd/internal/bloomlayout"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/layout"
)

// Report is what `urldedupd stats --json` prints, /v1/stats returns and
// the metrics export: how full a state is, measured, and what that means
// for its answers, by its layout's own formula (layout.Report).
type Report = layout.Report

// Report measures the state (reading all of it: its directory, or every
// key in Redis) and returns its report.
func (s *State) Report(ctx context.Context) (Report, error) {
	if s.redis != nil {
		return s.redis.Report(ctx, s.where)
	}
	return s.local.Report(ctx, s.where)
}

// BitmapReport is the report of a Bitmap state of metadata m and fill f
// (bitcheck.Report).
func BitmapReport(where string, m format.Meta, f bitcheck.Fill) Report {
	return bitcheck.Report(where, m, f)
}

// KeyedReport is the report of a Keyed state of metadata m and fill f
// (keyed.Report).
func KeyedReport(where string, m format.Meta, f keyed.Fill) Report { return keyed.Report(where, m, f) }

// FilterReport is the report of a state of the Bloom family of metadata m
// and measures f (bloomlayout.StateReport).
func FilterReport(where string, m format.Meta, f bloomlayout.Report) Report {
	return bloomlayout.StateReport(where, m, f)
}
