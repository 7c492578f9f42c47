package api

import (
	"context"

	"github.com/urldedupd/urldedupd/pkg/bitcheck"
	"github.com/urldedupd/urldedupd/pkg/format"
	"github.com/urldedupd/urldedupd/pkg/shardfile"
	"github.com/urldedupd/urldedupd/pkg/signature"
)

// Backend is where the API's decisions are made: a local state (Local) or
// Redis (*redisstate.Redis). It must be safe for concurrent use.
type Backend interface {
	bitcheck.Decider
	// Fill counts the set bits.
	Fill(ctx context.Context) (bitcheck.Fill, error)
	// Meta is the state's metadata.
	Meta() format.Meta
	// String says where the state is, for reports.
	String() string
}

// Local is an open local state as a Backend.
type Local struct {
	Dir *shardfile.Dir
	Set *bitcheck.Set
}

func (l Local) Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error {
	return l.Set.Decide(ctx, sigs, seen, dryRun)
}
func (l Local) Fill(context.Context) (bitcheck.Fill, error) { return l.Set.Fill() }
func (l Local) Meta() format.Meta                           { return l.Dir.Meta() }
func (l Local) String() string                              { return l.Dir.Path() }
