package bitmapwindow

import (
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// MemoryShards returns 256 zeroed shards of a window of g generations,
// 8-byte aligned, for a state in memory.
func MemoryShards(g int) [][]byte {
	shards := make([][]byte, signature.Shards)
	for i := range shards {
		words := make([]uint64, ShardBytes(g)/8)
		shards[i] = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), ShardBytes(g))
	}
	return shards
}
