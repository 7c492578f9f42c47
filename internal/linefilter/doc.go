// Package linefilter de-duplicates streams of URL lines against a
// persistent bitmap: a shared, persistent awk '!seen[$0]++'.
//
// Lines are read in large blocks, signed and decided a batch at a time
// (see bitcheck.Set.TestAndSetBatch), and written in input order. Nothing
// is allocated per line.
package linefilter
