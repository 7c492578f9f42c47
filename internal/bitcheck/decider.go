package bitcheck

import "github.com/urldedupd/urldedupd/internal/layout"

// A Decider decides batches of signatures. It is layout.Decider, which
// every layout and state implements; the name stays here for one step, so
// that callers keep compiling: use layout.Decider (or state.Decider).
type Decider = layout.Decider

var _ Decider = (*Set)(nil)
