package signature

import (
	"fmt"
	"hash/crc32"
)

// Signature is the hash of a normalized URL: a 32-bit CRC in the low bits
// (the bitmap layout's signature), or 64 bits of keyed SipHash (the keyed
// layout's; see [SipHash]).
type Signature uint64

// Shard returns the shard that holds a CRC signature's bit: the top 8 of
// its 32 bits.
func (s Signature) Shard() uint8 { return uint8(uint32(s) >> 24) }

// Bit returns a CRC signature's bit offset inside its shard: the low 24
// bits.
func (s Signature) Bit() uint32 { return uint32(s) & (BitsPerShard - 1) }

// String formats the signature in hex: 8 digits for a CRC, the first two of
// which name the shard file; up to 16 for a keyed hash.
func (s Signature) String() string { return fmt.Sprintf("%08x", uint64(s)) }

const (
	// Shards is the number of shard files.
	Shards = 256
	// BitsPerShard is the number of bits, and so of signatures, per shard.
	BitsPerShard = 1 << 24
)

// Algorithm is the CRC32 polynomial used for signatures. It is part of the
// on-disk format: a state made with one algorithm cannot be used with another.
type Algorithm uint8

const (
	// IEEE is the CRC32 of zlib, Ethernet and Python's zlib.crc32, and the
	// patent's "CRC32". It is the default.
	IEEE Algorithm = iota
	// Castagnoli is CRC32C, computed with the SSE4.2 CRC32 instruction at
	// every length where the CPU has it.
	Castagnoli
	// SipHash is SipHash-1-3 under a 128-bit secret [Key], a pseudorandom
	// function (the variant Rust's and Python's hash tables rely on against
	// chosen collisions): without the key no one can find two URLs with
	// the same hash, or one with the hash of a given URL. It is the keyed
	// layout's signature; a Signer for it needs the key (NewKeyedSigner).
	SipHash
)

var (
	ieeeTable       = crc32.IEEETable
	castagnoliTable = crc32.MakeTable(crc32.Castagnoli)
)

// String returns the name used in the state metadata and on the command
// line: "crc32" or "crc32c".
func (a Algorithm) String() string {
	switch a {
	case IEEE:
		return "crc32"
	case Castagnoli:
		return "crc32c"
	case SipHash:
		return "siphash-1-3"
	}
	return fmt.Sprintf("Algorithm(%d)", uint8(a))
}

// ParseAlgorithm parses a name returned by [Algorithm.String].
func ParseAlgorithm(name string) (Algorithm, error) {
	switch name {
	case "crc32", "ieee", "crc32-ieee":
		return IEEE, nil
	case "crc32c", "castagnoli":
		return Castagnoli, nil
	case "siphash-1-3", "siphash":
		return SipHash, nil
	}
	return 0, fmt.Errorf("%w: %q (want crc32, crc32c or siphash-1-3)", ErrUnknownAlgorithm, name)
}

func (a Algorithm) table() *crc32.Table {
	if a == Castagnoli {
		return castagnoliTable
	}
	return ieeeTable
}

// Keyed reports whether the algorithm needs a secret key: SipHash.
func (a Algorithm) Keyed() bool { return a == SipHash }

// Sum returns the signature of b as it is, without normalization. For
// SipHash it uses the zero key, which is no secret: sign with a Signer
// made by NewKeyedSigner instead.
func (a Algorithm) Sum(b []byte) Signature {
	if a == SipHash {
		return Signature(SipHash13(0, 0, b))
	}
	return Signature(crc32.Checksum(b, a.table()))
}

// KeySize is the size of a Key in bytes.
const KeySize = 16

// A Key is the secret key of a keyed signature. Whoever knows it can forge
// collisions: keep it like a password (mode 0600, never printed).
type Key [KeySize]byte
