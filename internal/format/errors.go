package format

import "errors"

var (
	// ErrNoState is returned when there is no state where one is to be
	// opened (and it is not to be created).
	ErrNoState = errors.New("no urldedupd state")
	// ErrShardSize is returned when a shard is not exactly the state's
	// shard size, or a shard file is not a regular file.
	ErrShardSize = errors.New("shard file has the wrong size")
	// ErrCorrupt is returned when metadata cannot be parsed or its checksum
	// does not match.
	ErrCorrupt = errors.New("corrupt metadata")
	// ErrVersion is returned for a metadata format version this build does
	// not know.
	ErrVersion = errors.New("unknown state format version")
	// ErrLayout is returned for a layout, shard count, shard size or bit
	// order this build does not know.
	ErrLayout = errors.New("unknown state layout")
	// ErrMismatch is returned when a state's format (layout, signature
	// algorithm, normalization, sizes or key) differs from the one the
	// caller asked for or from another state's it is to be combined with.
	ErrMismatch = errors.New("state format differs from the one asked for")
	// ErrKey is returned for a key file that cannot be read as one, or
	// that others than its owner can read.
	ErrKey = errors.New("bad key file")
)
