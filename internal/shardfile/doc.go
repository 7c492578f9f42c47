// Package shardfile manages a urldedupd state directory: 256 shard files
// named 00 … ff, each exactly 2 MiB (2^24 bits), and one metadata file,
// urldedupd.meta, that records how the bits are to be read.
//
// # Layout
//
// A shard holds raw bits and nothing else, so any tool can read it: the bit
// for offset b of shard s is bit b%8 (least significant first) of byte b/8
// of the file named by the two hex digits of s. The metadata file is small
// UTF-8 text, one "key value" per line, ending in a CRC32 of everything
// before it; see [Meta].
//
// # Sharing
//
// [Open] maps every shard MAP_SHARED, so all processes that open the same
// directory see each other's bits at once. Each holds a shared flock on the
// directory; creation takes it exclusively. Nothing in this package ever
// truncates, resizes or rewrites an existing shard or metadata file: a state
// that does not validate is refused with an error naming the file.
//
// # Durability
//
// Bits live in the page cache as soon as they are set, so a process that is
// killed (even with SIGKILL) loses nothing. After a power loss or kernel
// crash, what was set since the last [Dir.Sync] may be lost; set
// [Options.FlushInterval] to bound that window. Creation is crash-safe: the
// metadata is written first under a marker name ([CreatingName]) and renamed
// to urldedupd.meta last, so a directory without it was never a complete
// state, and one with the marker is a creation that was killed, which the
// next creator removes and makes again.
//
// # Faults
//
// A shard truncated under a process that maps it (or a sparse one whose
// disk filled) turns the next access to the lost pages into SIGBUS, which
// ends a Go program. Code that touches shard memory catches it instead:
// the goroutine makes faults panics (runtime/debug.SetPanicOnFault), a
// deferred function recovers the panic and asks [Dir.Fault] whether it was
// a fault inside this Dir's shards, which it returns as [ErrFault] naming
// the shard. Package bitcheck does so once per call (per batch), so the
// per-URL path is unchanged.
package shardfile
