// Package bloomlayout decides URLs on a state of the Bloom family's
// layouts, the filters of the design's literature made persistent and
// shared: a classic Bloom filter (format.Bloom), the multi-dimensional
// Bloom filter (format.MDBF) and the dynamic splittable Bloom filter
// (format.DSBF), over the 256 mapped shards of a state directory. It
// registers the three layouts, with their plans and defaults, with package
// layout (layout.go, plan.go).
//
// Every layout signs a URL with SipHash-1-3 under the state's secret key
// (as the keyed layout does: no collision can be forged without it) and
// draws its positions from those 64 bits, one signature per URL being
// what a state's batches carry: position i is the i-th output of
// splitmix64 seeded from the signature, reduced onto the filter (each a
// full 64-bit hash; see stream for why not double hashing).
//
//   - Bloom: the state is one array of 256·shard-size·8 bits; a URL sets K
//     positions anywhere in it.
//   - MDBF: the array holds Groups groups end to end, each a V1 of V1Bits
//     bits and a V2 of V1Bits/K bits. A URL is inserted into one group,
//     chosen by its hash (K − 1 positions in V1, one in V2), and is present
//     when all its positions are set in any group.
//   - DSBF: each shard is a leaf: a 64-byte header (split flag, URLs
//     stored; format.LeafHeaderBytes) and a Bloom filter of the rest. A
//     location hash of each level sends a URL to one of Children leaves;
//     the first level is leaves 0..c−1, the children of leaf s are
//     c·(s+1) … c·(s+1)+c−1 (level order), so every process finds the tree
//     from the headers alone. A leaf whose URLs reach its bound splits: it
//     is frozen (queries still consult it) and new URLs go to its
//     children. The bound of depth d is FMax·½^d, so the rates along any
//     path sum to under FMax. A leaf whose children would be past leaf 255
//     cannot split and fills past its bound; Report counts it.
//
// # Exactly once across processes
//
// A URL's positions are spread over many words (and, for DSBF, a split
// changes where it goes), so no single atomic instruction decides it.
// Decide holds an exclusive open-file-description lock (fcntl
// F_OFD_SETLKW) on the first byte of shard 00 for the whole batch, and a
// mutex within the process: the kernel drops the lock when a process dies,
// however it dies. Batches of all processes are serialized; what that costs
// is in docs/BENCHMARKS.md. A dry run (check) takes no lock: it reads words
// atomically and sets nothing.
//
// # DSBF in Redis
//
// A DSBF is kept in Redis too (redis.go; package redisstate is the
// transport): its leaves are the shard keys, decided by BITFIELD commands
// in rounds (decideTree); a URL is sent to a leaf that can split only
// under a lease of room taken from "<prefix>:lease:<leaf>", so a leaf's
// bound holds whatever the number of writers. Close gives back the room a
// process leased and did not use. Bloom and MDBF spread a URL's bits over
// the whole state and are kept in directories only.
package bloomlayout
