package shardfile

import (
	"fmt"
	"path/filepath"
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/format"
)

// Fault returns the error for r, a value recovered from a panic, when r is
// a memory fault at an address inside one of d's mapped shards: ErrFault,
// wrapped with the shard's path. For any other value it returns nil, and
// the caller should re-panic.
//
// The faulting goroutine must have called runtime/debug.SetPanicOnFault(true)
// before touching the shard; without it a fault ends the process.
func (d *Dir) Fault(r any) error {
	f, ok := r.(interface{ Addr() uintptr })
	if !ok {
		return nil
	}
	addr := f.Addr()
	for i, m := range d.maps {
		if len(m) == 0 {
			continue
		}
		start := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
		if addr >= start && addr-start < uintptr(len(m)) {
			return fmt.Errorf("shardfile: %s: %w", filepath.Join(d.path, format.ShardName(i)), ErrFault)
		}
	}
	return nil
}
