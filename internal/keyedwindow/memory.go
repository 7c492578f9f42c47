package keyedwindow

import (
	"sync"
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/keyed"
)

// MemoryLocker serialises the shards of tables in one process (a state
// in memory, tests).
type MemoryLocker struct{ mu [keyed.Shards]sync.Mutex }

// Lock locks shard i.
func (m *MemoryLocker) Lock(i int) error { m.mu[i].Lock(); return nil }

// Unlock unlocks shard i.
func (m *MemoryLocker) Unlock(i int) error { m.mu[i].Unlock(); return nil }

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
