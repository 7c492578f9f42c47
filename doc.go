// Package urldedupd is the Go entry point to urldedupd's persistent
// "seen?" sets: open a state — a directory of memory-mapped shard files, or
// a state in Redis or Redis Cluster — and decide batches of URLs against
// it, from any number of goroutines and processes at once.
//
// # Basics
//
// A state answers, for each URL, whether it was seen before: Decide
// records the URLs it has not seen (each is answered new exactly once,
// whichever process or goroutine asks first) and Check only looks. URLs are
// normalized before they are signed, so equivalent spellings
// (HTTP://Example.com:80/a/../ and http://example.com/) are one URL; a URL
// that cannot be normalized is signed as written.
//
// The state is the one the urldedupd command uses: a directory made by
// `urldedupd init` (or by Open with Options.Create, in the default bitmap
// layout), or a Redis address (redis://, rediss://, redis-cluster://,
// rediss-cluster://, unix://). A crawler and the urldedupd sensor can share
// one.
//
// # Caveats
//
// "Duplicate" is sometimes false: a signature shared by two URLs answers
// the second one a duplicate. How likely that is grows as the state fills;
// Stats reports it (FalseDupChance). "New" is never false.
//
// Everything else in this module is internal: this package is the promise
// made to Go programs.
package urldedupd
