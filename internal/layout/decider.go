package layout

import (
	"context"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// A Decider decides batches of signatures: a layout opened over a state
// directory, a state in Redis, or a state (package state) holding either.
type Decider interface {
	// Decide decides sigs in order: seen[i] reports whether sigs[i] was
	// present; unless dryRun, every signature is present afterwards. On
	// an error nothing of the batch has been answered, though a remote
	// backend may have stored some of it.
	Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error
}
