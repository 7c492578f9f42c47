package keyedwindow

import (
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/keyed"
)

// MemoryShards returns 256 zeroed shards of a bucket area of area bytes
// each, 8-byte aligned, for a state in memory.
func MemoryShards(area int64) [][]byte {
	shards := make([][]byte, keyed.Shards)
	for i := range shards {
		words := make([]uint64, ShardBytes(area)/8)
		shards[i] = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), ShardBytes(area))
	}
	return shards
}
