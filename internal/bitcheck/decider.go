package bitcheck

import (
	"context"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// A Decider decides batches of signatures: a local *Set, or a remote
// bitmap such as the Redis backend's.
type Decider interface {
	// Decide decides sigs in order: seen[i] reports whether sigs[i] was
	// set; unless dryRun, every bit is set afterwards. On an error nothing
	// of the batch has been answered, though a remote backend may have set
	// some of its bits.
	Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error
}

var _ Decider = (*Set)(nil)
