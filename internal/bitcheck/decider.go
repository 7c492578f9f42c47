package bitcheck

import "github.com/urldedupd/urldedupd/internal/layout"

var _ layout.Decider = (*Set)(nil)
