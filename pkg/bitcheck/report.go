package bitcheck

import (
	"math"
	"time"

	"github.com/urldedupd/urldedupd/pkg/format"
)

// Report is the summary of a state that `urldedupd stats --json` prints and
// the API's /v1/stats returns.
type Report struct {
	Dir               string   `json:"dir"`
	Signature         string   `json:"signature"`
	Normalize         string   `json:"normalize"`
	Created           string   `json:"created"`
	Bits              uint64   `json:"bits"`
	BitsSet           uint64   `json:"bits_set"`
	FillRatio         float64  `json:"fill_ratio"`
	EstimatedDistinct *float64 `json:"estimated_distinct"` // null when the bitmap is full
	FalseDupChance    float64  `json:"false_duplicate_chance"`
	Shards            []uint64 `json:"shards"`
}

// NewReport builds the report of the state at dir from its metadata and
// fill.
func NewReport(dir string, m format.Meta, f Fill) Report {
	r := Report{
		Dir: dir, Signature: m.Spec.Algorithm.String(), Normalize: m.Spec.Mode.String(),
		Created: m.Created.Format(time.RFC3339), Bits: uint64(Bits),
		BitsSet: f.Total(), FillRatio: f.Ratio(), FalseDupChance: f.Ratio(), Shards: f.Shard[:],
	}
	if e := f.Estimate(); !math.IsInf(e, 0) {
		r.EstimatedDistinct = &e
	}
	return r
}
