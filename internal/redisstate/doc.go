// Package redisstate keeps a urldedupd state in Redis or Redis Cluster,
// for sensors and crawlers on several hosts that must share one "seen?" set.
//
// It is the transport: pipelines per node, retries of commands that
// provably did not run, WAIT, cluster routing (route.go). What is in the
// keys is the layout's (package layout): a layout.RedisLayout opens its
// half of the state over this transport (layout.Transport), either
// commands that decide a URL each (layout.RedisCommands: SETBIT of the
// bitmap in package bitcheck, the keyed script in package keyed), sent
// here, or a protocol of its own (layout.RedisRounds: the DSBF's tree in
// package bloomlayout, decided in rounds with leases), and its reports.
// This package knows no layout by name; a layout that is no RedisLayout
// is kept in state directories only.
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
// every decision is the server's. A batch sends each distinct signature
// once, as one pipeline; a repeat within the batch is a duplicate of its
// first occurrence.
//
// # Failures
//
// A command that may have reached the server is never sent again: a
// second SETBIT would answer "dup" for a URL whose "new" was lost, and no
// URL may be answered without Redis having decided. Commands that provably
// did not run (no connection could be made; LOADING, CLUSTERDOWN, TRYAGAIN,
// MASTERDOWN, READONLY or MOVED replies) are sent again with backoff until
// the batch's Timeout; so a restart or a cluster failover that completes
// within it costs a pause, not the run. Nor does the client library send
// anything again: a cluster's batch is split by master and sent on each
// master's own client, never through go-redis's cluster pipeline, which
// re-sends every command sent to a node, those that ran included, when
// the first comes back CLUSTERDOWN, TRYAGAIN, LOADING and the like. Any other failure returns
// ErrUnavailable (or, with OnError set to AssumeNew, answers the undecided
// URLs new, as asked).
//
// Replication is asynchronous: a master that dies before its replica has a
// bit loses the bit in the failover. Options.Replicas closes that gap: each
// batch waits (WAIT) for that many replicas of every master it wrote to.
package redisstate
