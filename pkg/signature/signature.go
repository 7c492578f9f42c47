package signature

import (
	"fmt"
	"hash/crc32"
)

// Signature is the 32-bit CRC of a normalized URL.
type Signature uint32

// Shard returns the shard that holds the signature's bit: its top 8 bits.
func (s Signature) Shard() uint8 { return uint8(s >> 24) }

// Bit returns the bit's offset inside its shard: the low 24 bits.
func (s Signature) Bit() uint32 { return uint32(s) & (BitsPerShard - 1) }

// String formats the signature as 8 hex digits, the first two of which name
// the shard file.
func (s Signature) String() string { return fmt.Sprintf("%08x", uint32(s)) }

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
	}
	return 0, fmt.Errorf("%w: %q (want crc32 or crc32c)", ErrUnknownAlgorithm, name)
}

func (a Algorithm) table() *crc32.Table {
	if a == Castagnoli {
		return castagnoliTable
	}
	return ieeeTable
}

// Sum returns the signature of b as it is, without normalization.
func (a Algorithm) Sum(b []byte) Signature {
	return Signature(crc32.Checksum(b, a.table()))
}
