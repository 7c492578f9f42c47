// Package bitmapwindow is the windowed bitmap layout's table: the patent's
// one bit a signature (package signature: 8 bits of shard, 24 of bit),
// kept for a window of G generations as a ring of G + 1 bitmaps a shard.
//
// A shard is a 4 KiB header and then the ring: bitmap r holds the
// generation the header says it does (bitmaps of generations nobody
// decided in are simply not marked, and read as empty). A decision on a
// shard is made under the state's lock, as in package keyedwindow: W, the
// highest generation used, moves to the clock's; the bitmap of the current
// generation is zeroed and marked if it holds an older one (the one that
// just left the window); then the signature is a duplicate if its bit is
// set in a live generation's bitmap, and otherwise its bit is set in the
// current one. Zeroing happens before the mark, and the mark and W are
// written after, so a process killed at any instant leaves the next one
// to redo what it had not finished.
//
// The same decision in Redis is one script run (decide.lua) on the shard's
// key, holding the same bytes; Redis's SETBIT order (most significant bit
// of a byte first) is the bit order of the mapping too.
package bitmapwindow
