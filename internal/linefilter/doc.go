// Package linefilter de-duplicates streams of URL lines against a
// persistent bitmap: a shared, persistent awk '!seen[$0]++'.
//
// Lines are read in large blocks, signed and decided a batch at a time
// (see bitcheck.Set.TestAndSetBatch), and written in input order. Nothing
// is allocated per line.
//
// There is one loop for every state: batches go through an inflight.Window
// whose depth is the state's InFlight for a remote state and 0 (answers at
// once, in the loop's goroutine) for a local one.
package linefilter
