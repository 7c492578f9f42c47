// Package signature turns a URL into the signature that names its place in
// a urldedupd state.
//
// A URL is first normalized (see [Mode]) and then hashed (see [Algorithm]).
// In the bitmap layout the hash is CRC32: the top 8 bits of the result name
// one of 256 shards, the low 24 bits one bit inside that shard, as in patent
// CN102693315A. In the keyed layout it is 64 bits of SipHash-1-3 under the
// state's secret [Key] (NewKeyedSigner), which package keyed splits into a
// shard, buckets and a fingerprint.
//
// # Speed
//
// A [Signer] keeps a scratch buffer, so signing allocates nothing once the
// buffer has grown to the longest URL seen. A URL that is already in normal
// form (lower-case scheme and host, no escapes to fix, no dot segments, no
// default port, no fragment) is hashed in place without being copied.
//
// # Compatibility
//
// With [IEEE] and [None] the signature is the same number zlib, Python's
// zlib.crc32 and Go's crc32.ChecksumIEEE compute over the URL bytes, so any
// tool can locate a URL's bit in the shard files.
package signature
