package layout

import (
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/window"
)

// Contender is a layout that compare (urldedupd-lab compare) measures
// against the other contenders: the state it makes of a memory budget,
// what it says of that state, and its own false-duplicate formula.
type Contender interface {
	// CompareState is the state compare makes for memory bytes and n
	// distinct URLs: its spec, size (0: the layout's default) and filter
	// parameters.
	CompareState(memory int64, n uint64) (format.Spec, int64, format.Filter)
	// CompareInfo describes a state of metadata m for compare's table:
	// its parameters, the bytes it uses and how it stays exactly once
	// across processes; report measures it, where that is needed.
	CompareInfo(m format.Meta, report func() (Report, error)) (params string, bytes int64, exactlyOnce string)
	// Theory is the layout's chance that the next new URL is reported a
	// duplicate after n distinct URLs, by its formula, or from the state
	// as measured (report) where its formula needs more than n.
	Theory(m format.Meta, n uint64, report func() (Report, error)) float64
}

// WindowContender is a windowed Contender: the window its compare state
// is made with (a comparison has no time, so the window only sets what
// the layout stores).
type WindowContender interface {
	CompareWindow() window.Spec
}
