package format

import (
	"fmt"
	"math/bits"

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
	// Keyed is a table of 32-bit fingerprints in 64-byte buckets of 16
	// little-endian slots, addressed by a 64-bit SipHash-1-3 of the URL
	// under the state's secret key (see package keyed).
	Keyed
)

// String returns the name used in the metadata: "bitmap-1bit" or
// "keyed-fp32x16".
func (l Layout) String() string {
	switch l {
	case Bitmap:
		return "bitmap-1bit"
	case Keyed:
		return "keyed-fp32x16"
	}
	return fmt.Sprintf("Layout(%d)", uint8(l))
}

// Name returns the short name used on the command line: "bitmap" or
// "keyed".
func (l Layout) Name() string {
	switch l {
	case Bitmap:
		return "bitmap"
	case Keyed:
		return "keyed"
	}
	return l.String()
}

// ParseLayout parses a name returned by [Layout.String] or [Layout.Name].
func ParseLayout(name string) (Layout, error) {
	switch name {
	case "bitmap-1bit", "bitmap":
		return Bitmap, nil
	case "keyed-fp32x16", "keyed":
		return Keyed, nil
	}
	return 0, fmt.Errorf("%w: layout %q (this build knows bitmap and keyed)", ErrLayout, name)
}

// Algorithm returns the signature algorithm a layout requires, when it
// requires one: SipHash for Keyed; ok is false for Bitmap, which takes
// either CRC32.
func (l Layout) Algorithm() (a signature.Algorithm, ok bool) {
	if l == Keyed {
		return signature.SipHash, true
	}
	return 0, false
}

// checkAlgorithm returns an error wrapping ErrLayout unless a is an
// algorithm of layout l.
func (l Layout) checkAlgorithm(a signature.Algorithm) error {
	if want, ok := l.Algorithm(); ok && a != want || !ok && a.Keyed() {
		return fmt.Errorf("%w: layout %s cannot use signature %s", ErrLayout, l, a)
	}
	return nil
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
	// of a signature's low 24 bits. It is also the smallest Keyed shard.
	ShardBytes = signature.BitsPerShard / 8
	// MaxShardBytes is the largest Keyed shard, 1 GiB: 2^24 buckets, as
	// many as the 24 bucket bits of the keyed hash address.
	MaxShardBytes = 1 << 30
)

// DefaultSizes are the patent's: 256 shards of 2 MiB.
var DefaultSizes = Sizes{Shards: Shards, ShardBytes: ShardBytes}

// Bytes is the state's total size.
func (s Sizes) Bytes() int64 { return int64(s.Shards) * s.ShardBytes }

// CheckSizes returns an error wrapping ErrLayout unless the layout can use
// sizes s. Every layout has 256 shards; a shard of the Bitmap layout is
// exactly 2 MiB (every 32-bit signature has its bit), one of the Keyed
// layout any power of two from 2 MiB to 1 GiB.
func (l Layout) CheckSizes(s Sizes) error {
	switch {
	case s.Shards != Shards:
	case l == Keyed && s.ShardBytes >= ShardBytes && s.ShardBytes <= MaxShardBytes && bits.OnesCount64(uint64(s.ShardBytes)) == 1:
		return nil
	case l != Keyed && s.ShardBytes == ShardBytes:
		return nil
	}
	if l == Keyed {
		return fmt.Errorf("%w: %d shards of %d bytes (want %d of a power of two from %d to %d)", ErrLayout,
			s.Shards, s.ShardBytes, Shards, ShardBytes, MaxShardBytes)
	}
	return fmt.Errorf("%w: %d shards of %d bytes (want %d of %d)", ErrLayout, s.Shards, s.ShardBytes, Shards, ShardBytes)
}

// ShardName returns the name of shard i, as a file in a state directory
// and as the suffix of a Redis key: two lower-case hex digits.
func ShardName(i int) string { return fmt.Sprintf("%02x", i) }
