// Package bloom is the classic Bloom filter the patent (CN102693315A)
// measures itself against: one bit array of m bits, and k ≤ 10 positions
// per URL taken from the CRC32, MD5 and SHA1 of its normal form.
//
// # Positions
//
// The three digests give ten 32-bit words, in this order: CRC32 (IEEE),
// the four big-endian words of MD5, the five of SHA1. A filter of k
// positions uses the first k of them (so k = 1 is the CRC32 alone, k = 5
// CRC32 and MD5, k = 10 all three: the patent's kcrc32 = 1, kmd5 = 4,
// ksha1 = 5), each reduced modulo m; only the digests needed are computed.
// m is at most 2^32, the most a 32-bit word addresses.
//
// # Decisions
//
// A URL is a duplicate when all its k bits are set. Deciding sets them,
// each by one atomic OR, so the answer of concurrent deciders is never a
// torn bit; but the k bits are not set as one, so two deciders of the same
// URL at once may both find one of its bits clear and both answer new. A
// state shared by processes must serialize deciders of a URL (a lock held
// across the k ORs); this package does not.
//
// # Errors
//
// After n distinct URLs the chance that the next new one is reported a
// duplicate is about (1 − e^(−kn/m))^k (FalseDup), or, from the measured
// fraction f of bits set, f^k (FalseDupFromFill).
package bloom
