// Package mdbf is the multi-dimensional Bloom filter (MDBF) of the design's
// literature (seed 002): S groups, each of two bit vectors, V1 of N bits
// and V2 of N/k bits, each with its own hash functions; a URL is present
// if, in any one group, all its bits in V1 and in V2 are set.
//
// # Choices the paper leaves open
//
// The paper does not say which group a URL is inserted into, nor how a
// group's k hash functions divide between V1 (k1) and V2 (k2). Inserting
// into every group would make "present in any one group" worse with every
// group, against the paper's own claim (its rate falls as S grows); so a
// URL goes into one group, chosen by a hash of its own, and a query asks
// all S groups as the paper says. V2 takes k2 = 1 by default and V1 the
// other k1 = k − 1: V2 has 1/k of V1's bits, so with one hash its bits are
// loaded as V1's are with k.
//
// # Rate
//
// With n URLs spread over S groups, a group holds about n/S, and a URL
// not held is reported present with chance
//
//	1 − (1 − p1·p2)^S,  p1 = (1 − e^(−k1·(n/S)/N))^k1,  p2 = (1 − e^(−k2·(n/S)/(N/k)))^k2
//
// (FalsePositive). Its memory is S·(N + N/k) bits.
package mdbf
