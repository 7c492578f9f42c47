// Package bitcheck is the patent's bitmap layout: it decides whether a URL
// signature has been seen by testing and setting the signature's bit in
// the shared shard mapping of a [shardfile.Dir]. It registers the layout
// "bitmap" with package layout (layout.go).
//
// # Exactly once
//
// TestAndSet is one atomic 64-bit OR on the mapped word, which returns the
// old word. The mapping is MAP_SHARED, so the OR is atomic across
// goroutines and across processes mapping the same files alike: of all the
// callers anywhere that set the same bit, exactly one sees it clear and is
// told "new".
//
// # Speed
//
// A random bit in 512 MiB is a cache and TLB miss, and an atomic OR waits
// for its miss before the next one can start. The batch forms therefore
// look first: a pass of plain loads over the whole batch lets the misses
// overlap, and a bit already set is a certain duplicate (bits never clear).
// Only bits that looked clear get the atomic OR, in input order, so the
// first occurrence of a signature within a batch is the new one.
//
// # Faults
//
// A shard file truncated under the process makes its mapped pages fault
// (SIGBUS). Decide, Check, Fill, Merge and OrShard catch that, once per
// call, and return shardfile.ErrFault naming the shard; other shards keep
// working. Test, TestAndSet and the batch forms do not: callers that may
// meet a damaged state use the former.
package bitcheck
