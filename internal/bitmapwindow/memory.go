package bitmapwindow

import (
	"sync"
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// MemoryLocker serialises the shards of tables in one process.
type MemoryLocker struct{ mu [signature.Shards]sync.Mutex }

// Lock locks shard i.
func (m *MemoryLocker) Lock(i int) error { m.mu[i].Lock(); return nil }

// Unlock unlocks shard i.
func (m *MemoryLocker) Unlock(i int) error { m.mu[i].Unlock(); return nil }

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
