package format

import (
	"fmt"
	"math/bits"

	"github.com/urldedupd/urldedupd/internal/signature"
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
	// Bloom is a classic Bloom filter over the whole state as one bit
	// array: Filter.K positions per URL by double hashing of its keyed
	// SipHash-1-3 (see package bloomlayout).
	Bloom
	// MDBF is the multi-dimensional Bloom filter: Filter.Groups groups of a
	// V1 of Filter.V1Bits bits and a V2 of V1Bits/K bits, laid end to end
	// over the state; a URL is inserted into one group and found in any.
	MDBF
	// DSBF is the dynamic splittable Bloom filter: each shard is a leaf (a
	// header and a Bloom filter), a location hash per level sends a URL to
	// one of Filter.Children leaves, and a leaf past its bound splits into
	// the Children leaves numbered after it.
	DSBF
	// KeyedWindow is the keyed layout with time: each shard a 64-byte
	// header and buckets of 32-bit slots, a slot a 26-bit fingerprint and
	// a 6-bit generation tag, so that a URL is held only within
	// Meta.Window (see package keyedwindow).
	KeyedWindow
	// BitmapWindow is the bitmap layout with time: each shard a 4 KiB
	// header and a ring of Window.Generations+1 bitmaps of 2^24 bits, one
	// a generation (see package bitmapwindow).
	BitmapWindow
)

// layoutInfo is what the format says of a layout: its metadata and
// command-line names, whether it is keyed (every layout but Bitmap) or of
// the Bloom family (parameters in Meta.Filter, checked by filter), and
// the sizes of its shards (powers of two from minShard to maxShard). It
// is the one place that tells layouts apart in this package; their code
// is in the packages registered with package layout.
type layoutInfo struct {
	meta, cli          string
	keyed              bool
	window             bool                                    // Meta.Window is set
	header             int64                                   // bytes of a shard before its power-of-two area (keyed-window)
	ring               bool                                    // a shard is RingHeaderBytes and Generations+1 bitmaps (bitmap-window)
	filter             func(f Filter, stateBits uint64) string // "" when f suits the layout
	minShard, maxShard int64
}

var layoutNames = [...]layoutInfo{
	Bitmap: {meta: "bitmap-1bit", cli: "bitmap", minShard: ShardBytes, maxShard: ShardBytes},
	Keyed:  {meta: "keyed-fp32x16", cli: "keyed", keyed: true, minShard: ShardBytes, maxShard: MaxShardBytes},
	Bloom:  {meta: "bloom-dh", cli: "bloom", keyed: true, filter: bloomFilter, minShard: MinFilterShardBytes, maxShard: ShardBytes},
	MDBF:   {meta: "mdbf-v1v2", cli: "mdbf", keyed: true, filter: mdbfFilter, minShard: MinFilterShardBytes, maxShard: ShardBytes},
	DSBF:   {meta: "dsbf-leaves", cli: "dsbf", keyed: true, filter: dsbfFilter, minShard: MinFilterShardBytes, maxShard: ShardBytes},
	KeyedWindow: {meta: "keyed-window-fp26t6", cli: "keyed-window", keyed: true, window: true, header: WindowHeaderBytes,
		minShard: ShardBytes, maxShard: MaxShardBytes},
	BitmapWindow: {meta: "bitmap-window-ring", cli: "bitmap-window", window: true, ring: true},
}

// info returns what the format says of l; the zero layoutInfo for a
// layout this build does not know.
func (l Layout) info() layoutInfo {
	if int(l) < len(layoutNames) {
		return layoutNames[l]
	}
	return layoutInfo{}
}

// Layouts are every layout this build knows, in order.
var Layouts = []Layout{Bitmap, Keyed, Bloom, MDBF, DSBF, KeyedWindow, BitmapWindow}

// String returns the name used in the metadata: "bitmap-1bit",
// "keyed-fp32x16", "bloom-dh", "mdbf-v1v2", "dsbf-leaves",
// "keyed-window-fp26t6" or "bitmap-window-ring".
func (l Layout) String() string {
	if int(l) < len(layoutNames) {
		return layoutNames[l].meta
	}
	return fmt.Sprintf("Layout(%d)", uint8(l))
}

// Name returns the short name used on the command line: "bitmap", "keyed",
// "bloom", "mdbf", "dsbf", "keyed-window" or "bitmap-window" (init makes
// the last two from keyed and bitmap with --window).
func (l Layout) Name() string {
	if int(l) < len(layoutNames) {
		return layoutNames[l].cli
	}
	return l.String()
}

// ParseLayout parses a name returned by [Layout.String] or [Layout.Name].
func ParseLayout(name string) (Layout, error) {
	for l, n := range layoutNames {
		if name == n.meta || name == n.cli {
			return Layout(l), nil
		}
	}
	return 0, fmt.Errorf("%w: layout %q (this build knows bitmap, keyed, bloom, mdbf, dsbf, keyed-window and bitmap-window)", ErrLayout, name)
}

// Keyed reports whether states of the layout sign URLs with SipHash-1-3
// under a secret key of their own (kept in the key file, or in Redis's
// metadata): every layout but Bitmap.
func (l Layout) Keyed() bool { return l.info().keyed || int(l) >= len(layoutNames) }

// Windowed reports whether states of the layout hold a URL only within a
// time window (Meta.Window): KeyedWindow and BitmapWindow.
func (l Layout) Windowed() bool { return l.info().window }

// Unwindowed returns the layout a windowed one adds time to (Keyed for
// KeyedWindow, Bitmap for BitmapWindow), and any other layout itself.
func (l Layout) Unwindowed() Layout {
	switch l {
	case KeyedWindow:
		return Keyed
	case BitmapWindow:
		return Bitmap
	}
	return l
}

// WithWindow returns the windowed layout of l (KeyedWindow for Keyed,
// BitmapWindow for Bitmap); ok is false for a layout that has none.
func (l Layout) WithWindow() (w Layout, ok bool) {
	switch l {
	case Keyed, KeyedWindow:
		return KeyedWindow, true
	case Bitmap, BitmapWindow:
		return BitmapWindow, true
	}
	return l, false
}

// Filter reports whether the layout is one of the Bloom family (Bloom,
// MDBF, DSBF), whose parameters are in Meta.Filter.
func (l Layout) Filter() bool { return l.info().filter != nil }

// Algorithm returns the signature algorithm a layout requires, when it
// requires one: SipHash for the keyed layouts; ok is false for Bitmap,
// which takes either CRC32.
func (l Layout) Algorithm() (a signature.Algorithm, ok bool) {
	if l.Keyed() {
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
	// MinFilterShardBytes is the smallest shard of the Bloom family, 4
	// KiB (a state of 1 MiB); their largest is ShardBytes (512 MiB, 2^32
	// bits, as far as 32-bit positions reach).
	MinFilterShardBytes = 4 << 10
	// WindowHeaderBytes is the header of a KeyedWindow shard, before its
	// buckets (keyedwindow.HeaderBytes).
	WindowHeaderBytes = 64
	// RingHeaderBytes is the header of a BitmapWindow shard, before its
	// ring of bitmaps (bitmapwindow.HeaderBytes).
	RingHeaderBytes = 4096
)

// RingShardBytes is the size of a BitmapWindow shard of a window cut into
// g generations: its header and g+1 bitmaps of ShardBytes.
func RingShardBytes(g int) int64 { return RingHeaderBytes + int64(g+1)*ShardBytes }

// DefaultSizes are the patent's: 256 shards of 2 MiB.
var DefaultSizes = Sizes{Shards: Shards, ShardBytes: ShardBytes}

// Bytes is the state's total size.
func (s Sizes) Bytes() int64 { return int64(s.Shards) * s.ShardBytes }

// CheckSizes returns an error wrapping ErrLayout unless the layout can use
// sizes s. Every layout has 256 shards; a shard of the Bitmap layout is
// exactly 2 MiB (every 32-bit signature has its bit), one of the Keyed
// layout any power of two from 2 MiB to 1 GiB, one of the Bloom family any
// power of two from 4 KiB to 2 MiB.
func (l Layout) CheckSizes(s Sizes) error {
	if l.info().ring {
		n := (s.ShardBytes - RingHeaderBytes) / ShardBytes
		if s.Shards == Shards && s.ShardBytes > RingHeaderBytes && (s.ShardBytes-RingHeaderBytes)%ShardBytes == 0 && n >= 2 && n <= 33 {
			return nil
		}
		return fmt.Errorf("%w: %d shards of %d bytes (want %d of %d + (generations+1)·%d)", ErrLayout,
			s.Shards, s.ShardBytes, Shards, RingHeaderBytes, ShardBytes)
	}
	if h := l.info().header; h != 0 {
		a := Sizes{Shards: s.Shards, ShardBytes: s.ShardBytes - h}
		if err := l.Unwindowed().CheckSizes(a); err != nil {
			return fmt.Errorf("%w: %d shards of %d bytes (want %d of %d + a power of two from %d to %d)", ErrLayout,
				s.Shards, s.ShardBytes, Shards, h, ShardBytes, MaxShardBytes)
		}
		return nil
	}
	lo, hi := l.info().minShard, l.info().maxShard
	if lo == 0 {
		lo, hi = ShardBytes, ShardBytes
	}
	if s.Shards == Shards && s.ShardBytes >= lo && s.ShardBytes <= hi && bits.OnesCount64(uint64(s.ShardBytes)) == 1 {
		return nil
	}
	if lo == hi {
		return fmt.Errorf("%w: %d shards of %d bytes (want %d of %d)", ErrLayout, s.Shards, s.ShardBytes, Shards, ShardBytes)
	}
	return fmt.Errorf("%w: %d shards of %d bytes (want %d of a power of two from %d to %d)", ErrLayout,
		s.Shards, s.ShardBytes, Shards, lo, hi)
}

// SizeRange returns the smallest and largest state of layout l, in bytes
// of its shards' areas (a windowed keyed state's headers not counted):
// every size between that is a power of two fits, none other. It is not
// defined for BitmapWindow, whose size follows from its generations.
func (l Layout) SizeRange() (lo, hi int64) {
	if l.info().header != 0 {
		l = l.Unwindowed()
	}
	lo, hi = l.info().minShard, l.info().maxShard
	if lo == 0 {
		lo, hi = ShardBytes, ShardBytes
	}
	return lo * Shards, hi * Shards
}

// ShardName returns the name of shard i, as a file in a state directory
// and as the suffix of a Redis key: two lower-case hex digits.
func ShardName(i int) string { return fmt.Sprintf("%02x", i) }
