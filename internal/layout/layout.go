package layout

import (
	"context"
	"errors"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// ErrPlan is returned by Layout.Plan when a state cannot be made as asked:
// a size its layout cannot have, or a capacity and false-duplicate chance
// it cannot meet. The message says what can.
var ErrPlan = errors.New("state: cannot be sized as asked")

// Plan is what a new state is asked to be, as init's flags say it: its
// size, or the distinct URLs it must hold (Capacity) with at most a
// FalseDup chance that the next new one is reported a duplicate, or both;
// and, for the Bloom family, the parameters asked (a zero field is chosen).
type Plan struct {
	Size     int64 // bytes of the whole state; 0: the layout's choice
	Capacity uint64
	FalseDup float64
	Key      *signature.Key // the key asked (nil: a new one, for a keyed layout)
	Filter   format.Filter
}

// Merge is how a layout's shards are merged into a compatible state's.
type Merge int

const (
	// MergeOr ORs the source's bits into the destination, word by word
	// (Local.(Orer)): bitmap, bloom, mdbf.
	MergeOr Merge = iota
	// MergeReinsert copies a shard byte for byte into an empty one and
	// otherwise re-inserts each of its fingerprints by the ordinary
	// decision: keyed, whose slots hold fingerprints in the order they
	// came.
	MergeReinsert
	// MergeCopy copies the whole state into an empty one, and nothing
	// else: dsbf, whose leaves split where their own URLs reach a bound.
	MergeCopy
)

// Layout is one layout of this build: how it is named, sized, opened over
// a state directory and merged. Its Redis commands are those of package
// redisstate (see docs/design.md, "Layouts").
type Layout interface {
	// ID is the layout's id in the format (format.Layout).
	ID() format.Layout
	// Name is its command-line name: "bitmap", "keyed", "bloom", …
	Name() string
	// Plan sets m's sizes and layout parameters (m.Sizes, m.Filter) from
	// p, checking the plan p.Capacity, p.FalseDup against them; an error
	// wraps ErrPlan. m comes with its spec, default sizes, the size asked
	// (when p.Size is set, already checked by the format) and the plan.
	Plan(p Plan, m *format.Meta) error
	// Open opens the layout over the shards of the open directory d.
	Open(d *shardfile.Dir) (Local, error)
	// Merge is how its shards are merged.
	Merge() Merge
}

// Local is a layout opened over a state directory's shards. It is safe for
// concurrent use; Close must not race with its use.
type Local interface {
	Decider
	// Report measures the state, reading all of it; where names it.
	Report(ctx context.Context, where string) (Report, error)
	// NotStored is how many URLs were answered new without being stored
	// (the keyed layout past its capacity); 0 for the others.
	NotStored() uint64
	// Close releases what Open took (not the directory).
	Close() error
}

// Orer is a Local whose layout merges by OR (MergeOr).
type Orer interface {
	// OrShard ORs data, shard i of a compatible state, into shard i and
	// returns the bits it added.
	OrShard(i int, data []byte) (added uint64, err error)
}

// Exclusiver is a Local whose decisions take a lock that Exclusive holds
// while fn runs, so that no process decides meanwhile (a tree copied into
// an empty state, MergeCopy).
type Exclusiver interface {
	Exclusive(fn func() error) error
}
