// Package redisstate keeps the urldedupd bitmap in Redis or Redis Cluster,
// for sensors and crawlers on several hosts that must share one "seen?" set.
//
// # Layout
//
// The same layout as the shard files: 256 strings "<prefix>:00" …
// "<prefix>:ff" of 2^24 bits, and "<prefix>:meta" holding the same text as
// urldedupd.meta, checked on connect exactly like the file. Bit offsets are
// mapped so that every string's bytes equal the shard file's bytes (Redis
// numbers bits from the most significant one; the files from the least),
// so a state moves between the two by copying bytes. In a cluster the 256
// keys spread over the slots.
//
// # Exactly once
//
// SETBIT returns the bit's old value and runs atomically on the server, so
// every decision is the server's. A batch is one pipeline; Redis runs a
// connection's commands in order, and in a cluster all commands for one
// key go to one node in order, so the first of repeated signatures in a
// batch is the new one.
//
// # Failures
//
// A pipeline that may have reached the server is never sent again: a
// second SETBIT would answer "dup" for a URL whose "new" was lost, and no
// URL may be answered without Redis having decided. Only connecting is
// retried (with backoff, bounded); a batch that fails returns ErrUnavailable
// (or, with OnError set to AssumeNew, is answered all new, as asked).
package redisstate
