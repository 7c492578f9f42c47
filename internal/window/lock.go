package window

import (
	"fmt"
	"sync"
)

// Locker serialises the decisions of every process that shares a windowed
// state: a table takes it for a whole batch (docs/windows.md says why a
// windowed decision takes a lock, and why one for the state).
type Locker interface {
	Lock() error
	Unlock() error
}

// Locked runs fn holding l: one lock for a whole batch, for every shard,
// because a lock is a system call pair (2.8 µs for an OFD lock and its
// release on this machine) and a batch of 1,024 URLs touches most of the
// 256 shards, so a lock a shard would cost 0.7 µs a URL. It releases l
// however fn ends: a panic (a memory fault on a mapping truncated under
// the process, caught further up) must not leave the state locked for
// every other process. A failure to take or release the lock is an error
// naming it.
func Locked(l Locker, fn func()) (err error) {
	if err := l.Lock(); err != nil {
		return fmt.Errorf("window: lock: %w", err)
	}
	defer func() {
		if uerr := l.Unlock(); uerr != nil && err == nil {
			err = fmt.Errorf("window: unlock: %w", uerr)
		}
	}()
	fn()
	return nil
}

// MemoryLocker is the Locker of tables in one process (a state in memory,
// tests).
type MemoryLocker struct{ mu sync.Mutex }

// Lock locks.
func (m *MemoryLocker) Lock() error { m.mu.Lock(); return nil }

// Unlock unlocks.
func (m *MemoryLocker) Unlock() error { m.mu.Unlock(); return nil }

// ByShard returns in dst the indexes of items grouped by their shard, in
// input order within a shard (a counting sort), so that a table advances
// each shard once a batch.
func ByShard[T any](dst []int32, items []T, shard func(T) uint8) []int32 {
	var count [257]int32
	for _, it := range items {
		count[int(shard(it))+1]++
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	if cap(dst) < len(items) {
		dst = make([]int32, len(items))
	}
	dst = dst[:len(items)]
	for j, it := range items {
		s := shard(it)
		dst[count[s]] = int32(j)
		count[s]++
	}
	return dst
}
