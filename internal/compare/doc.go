// Package compare runs de-duplication layouts side by side on the same
// URLs and measures what a user choosing one needs: bytes per URL, insert
// and query speed, the false-duplicate rate measured against an exact set
// (with a 95% confidence interval) and the layout's own formula for it.
//
// The contenders are the layouts of urldedupd (bitmap and keyed, in real
// temporary state directories), the filters of the design's literature
// (a classic Bloom filter with CRC32/MD5/SHA1 positions, the MDBF, the
// DSBF; in memory until they are layouts), Zheng et al.'s bitmap hash
// table (a bitmap indexed by a 32-bit string hash, in memory), and the
// exact set that is the truth.
package compare
