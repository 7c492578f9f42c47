// Package keyedwindow is the windowed keyed layout's table: the keyed
// layout's buckets of 32-bit slots, each slot a 26-bit fingerprint and a
// 6-bit generation tag (package window), so that a URL is a duplicate only
// while it was sighted within the window.
//
// A shard is a 64-byte header followed by the buckets. The header holds
// what the processes sharing the shard agree through: W, the highest
// generation used on the shard, and the sweep's progress. Every decision
// is made under the state's lock (docs/windows.md says why a
// lock-free decision is not exactly once with expiry), by one process at
// a time: advance W to the clock's generation, sweep what the schedule says
// is due, then decide the batch's URLs of that shard in order. Every write
// is one aligned store, and W is written after the sweep it covers, so a
// process killed at any instant leaves whole slots and a header the next
// process picks up from.
//
// A dry run (Check) takes no lock and writes nothing: it counts ages from
// the header's W (window.Spec.SlotLiveFrom).
//
// The same decision in Redis is one script run (decide.lua), which Redis
// runs alone, on the shard's key holding the same bytes.
package keyedwindow
