// Package keyed is the keyed layout's core: a table of 32-bit keyed
// fingerprints in cache-line buckets, decided by one compare-and-swap on
// shared memory, and the same decision as one Lua script on Redis. It
// registers the layout "keyed" with package layout (layout.go).
//
// # Hash
//
// A URL is normalized as package signature does (Signer.Normalized; a URL
// that cannot be normalized is hashed on its raw bytes) and hashed with
// SipHash-1-3 under a 128-bit secret key made from crypto/rand. The 64 bits
// are split (see Geometry.Locate):
//
//	bits 63..56  shard (256 shards)
//	bits 55..32  first bucket b1 within the shard (as many bits as the shard needs, up to 24)
//	bits 31..0   fingerprint fp (0 is "empty", so a zero fp becomes 1)
//	             second bucket b2 = b1 XOR (mix(fp) & mask | 1)
//
// so a state of 256 shards of any power-of-two size from 2 MiB (2^15
// buckets) to 1 GiB (2^24 buckets) is addressed by one 64-bit hash. Without
// the key no one can choose a URL that lands on another's fingerprint.
//
// # Table
//
// A shard is an array of 64-byte buckets, each 16 little-endian uint32
// slots. A decision scans b1 then b2 (at most two cache lines) for fp,
// stopping at the first empty slot: that slot, in that fixed order, is the
// only place fp may be inserted, by one CompareAndSwapUint32 from 0. A
// failed CAS re-reads the slot: it may now hold fp (a duplicate). Slots go
// from zero to non-zero once and never change again, so of all processes
// deciding one URL at once exactly one stores it, with no lock, and a
// process killed at any instant leaves only whole slots behind.
//
// When b1 and b2 are both full and fp is in neither, the URL is answered
// new but not stored (Full), and counted: overflow never makes a false
// duplicate, it makes later repeats of that URL look new again.
//
// # Errors
//
// A URL is reported a duplicate wrongly only when another URL with the same
// shard, a bucket in common and the same 32-bit fingerprint was stored
// first: about (slots compared)/2^32 for the next new URL; see Fill and
// Model for the formulas, and Plan for sizing.
package keyed
