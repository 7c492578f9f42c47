package keyed

import "errors"

var (
	// ErrShardSize is returned when shard memory is not a power of two
	// between MinShardBytes and MaxShardBytes, or not 4-byte aligned.
	ErrShardSize = errors.New("keyed: bad shard size")
	// ErrShardCount is returned when a table is given other than 256 shards.
	ErrShardCount = errors.New("keyed: bad shard count")
	// ErrKey is returned for a key that is not 16 bytes.
	ErrKey = errors.New("keyed: bad key")
	// ErrCannotMeet is returned by Plan when no state of at most
	// MaxShardBytes per shard meets the asked capacity and false-duplicate
	// rate with 32-bit fingerprints.
	ErrCannotMeet = errors.New("keyed: capacity and false-duplicate rate cannot be met")
	// ErrPlan is returned by Plan for a capacity or rate out of range.
	ErrPlan = errors.New("keyed: bad plan")
	// ErrReadOnly is returned when deciding on a read-only table without dry run.
	ErrReadOnly = errors.New("keyed: read-only table")
)
