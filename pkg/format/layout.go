package format

import (
	"fmt"

	"github.com/urldedupd/urldedupd/pkg/signature"
)

// Layout is how a state's shard bytes are laid out and read. It is part of
// the format: a state is read with its own layout or not at all.
type Layout uint8

const (
	// Bitmap is the patent's layout: one bit per 32-bit signature, the top
	// 8 bits of the signature naming the shard, the low 24 the bit in it
	// (least significant bit of each byte first). It is the zero Layout.
	Bitmap Layout = iota
)

// String returns the name used in the metadata: "bitmap-1bit".
func (l Layout) String() string {
	switch l {
	case Bitmap:
		return "bitmap-1bit"
	}
	return fmt.Sprintf("Layout(%d)", uint8(l))
}

// ParseLayout parses a name returned by [Layout.String].
func ParseLayout(name string) (Layout, error) {
	switch name {
	case "bitmap-1bit":
		return Bitmap, nil
	}
	return 0, fmt.Errorf("%w: layout %q (this build knows %q)", ErrLayout, name, Bitmap.String())
}

// BitOrder names the order of bits within a byte in the Bitmap layout:
// least significant first.
const BitOrder = "lsb0"

// Sizes are how many shards a state has and how long each is.
type Sizes struct {
	Shards     int
	ShardBytes int64
}

const (
	// Shards is the number of shards of every state.
	Shards = signature.Shards
	// ShardBytes is the size of a Bitmap shard: 2^24 bits, one per value
	// of a signature's low 24 bits.
	ShardBytes = signature.BitsPerShard / 8
)

// DefaultSizes are the patent's: 256 shards of 2 MiB.
var DefaultSizes = Sizes{Shards: Shards, ShardBytes: ShardBytes}

// Bytes is the state's total size.
func (s Sizes) Bytes() int64 { return int64(s.Shards) * s.ShardBytes }

// CheckSizes returns an error wrapping ErrLayout unless the layout can use
// sizes s. Every layout has 256 shards; a shard of the Bitmap layout is
// exactly 2 MiB (every 32-bit signature has its bit). Layouts to come may
// accept any power of two of at least 2 MiB.
func (l Layout) CheckSizes(s Sizes) error {
	if s.Shards != Shards || s.ShardBytes != ShardBytes {
		return fmt.Errorf("%w: %d shards of %d bytes (want %d of %d)", ErrLayout, s.Shards, s.ShardBytes, Shards, ShardBytes)
	}
	return nil
}

// ShardName returns the name of shard i, as a file in a state directory
// and as the suffix of a Redis key: two lower-case hex digits.
func ShardName(i int) string { return fmt.Sprintf("%02x", i) }
