// Package journal is the write-ahead log of a state directory's decisions:
// what lets serve keep its promise that a power loss takes at most
// --flush-interval of answers with one small fdatasync an interval, instead
// of writing back every shard page touched since the last flush (each page
// cleaned costs a TLB shootdown on every processor that maps it; see
// docs/BENCHMARKS.md, "The flush's cost").
//
// # Files
//
// A state's journal lives in its directory's journal/ subdirectory:
//
//   - epoch: one 4 KiB page, mapped MAP_SHARED by every process that
//     journals, holding the forget epoch (below);
//   - one NAME.log per writing process, append-only, flocked by its writer
//     while it lives: a 32-byte header naming the state, then frames.
//
// A frame is the signatures one writer answered new under one epoch:
//
//	n      uint32  signatures in the frame, 1 … MaxFrameSigs
//	crc    uint32  CRC-32C of epoch and signatures
//	epoch  uint64
//	sigs   n × uint64
//
// all little-endian. A writer appends in memory and writes with one
// fdatasync a flush ([Writer.Sync]). Now and then it checkpoints
// ([Writer.Checkpoint]): it starts a new file, syncs the shards (msync), and
// removes the old file, whose every decision the shards now hold.
//
// # Replay
//
// A writable open replays the journals of writers that are gone (their
// flock is free) by deciding their signatures again, then syncs the shards
// and removes the files ([Journal.Replay]). Bits only go from 0 to 1 and
// keyed slots only fill, so replaying a decision the shards already hold
// changes nothing. A torn tail (the frame a power loss cut) is reported,
// not fatal: it was never synced, so nothing was promised of it. Bytes
// that are not frames before the end are an error wrapping ErrCorrupt.
//
// # Forgets
//
// Replaying an old "new" after a forget of the same URL would bring the URL
// back: a URL that should be new answered duplicate. The epoch orders them.
// Every frame carries the forget epoch read before its decisions were
// made. A forget, under the epoch file's flock, clears its slots, bumps the
// epoch, syncs the shards and then records the epoch as done (the page's
// second word, synced). Replay, under the same flock, skips frames of an
// epoch below the last done forget: they were decided before it, and the
// forget's sync wrote them (or, when they raced it, lost them, which makes
// their URLs new again: the direction a power loss is allowed).
package journal
