// Package format defines what a urldedupd state is, independently of where
// it is kept: its layout, how URLs are signed (signature algorithm and
// normalization mode), its sizes (shard count and shard bytes), the name of
// each shard, and the metadata text that records all of these, with its
// parser, its validation and its errors.
//
// A state directory (package shardfile) and a state in Redis (package
// redisstate) hold the same metadata text and the same shard bytes, so both
// use this package, and a state moves between them by copying bytes.
//
// # The one mismatch error
//
// Every refusal because a state is of another format than the one a caller
// requires, or than another state it is to be combined with (merge,
// migrate), wraps [ErrMismatch]; callers test it with errors.Is.
//
// # Room for more
//
// A state names its [Layout]; today there is one, [Bitmap], the patent's
// one bit per CRC32 signature in 256 shards of 2 MiB. A layout decides
// which [Sizes] it accepts ([Layout.CheckSizes]) and whether the state has
// a secret key, recorded only by its identity ([Meta.KeyID]: a fingerprint
// of the key, never the key), so that states made with different keys can
// be refused before they are combined.
package format
