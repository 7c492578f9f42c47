package shardfile

import (
	"fmt"
	"os"

	"github.com/urldedupd/urldedupd/internal/format"
)

// allocateFn allocates a shard's blocks: allocate, replaced in tests to
// play file systems that have no fallocate or no space.
var allocateFn = allocate

// unallocated tells of the shards a writable Open left sparse because the
// file system cannot allocate them.
type unallocated struct {
	shards    int
	size      int64  // of a shard
	first     string // path of the first
	allocated int64  // bytes allocated to the first
	err       error  // fallocate's error for the first
}

// fillSparse allocates the holes of a sparse shard opened for writing:
// fallocate allocates them without changing a byte, safe while other
// processes map the file, so that a bit set later cannot find the disk
// full (SIGBUS). No space (ENOSPC, EDQUOT) or any other failure is
// ErrSparse. A file system without fallocate (EOPNOTSUPP, ENOSYS: ZFS
// before 2.2, NFSv3, ramfs; on a compressing one a fresh shard of zeros
// looks sparse too) is not: the shard is used as it is, noted in left, and
// a write that then finds the disk full faults safely (ErrFault for that
// request, see package bitcheck).
func fillSparse(f *os.File, path string, fi os.FileInfo, size int64, left *unallocated) error {
	n := allocatedBytes(fi)
	if n >= size {
		return nil
	}
	err := allocateFn(f, size)
	switch {
	case err == nil:
		return nil
	case isUnsupported(err):
		if left.shards == 0 {
			left.first, left.allocated, left.err, left.size = path, n, err, size
		}
		left.shards++
		return nil
	}
	return fmt.Errorf("shardfile: %s: %w: %d of %d bytes allocated; fallocate: %v (copy it with cp --sparse=never, or free space)",
		path, ErrSparse, n, size, err)
}

// warning is what Options.Warn is given: one error for all the shards.
func (u *unallocated) warning(dir string) error {
	return fmt.Errorf("shardfile: %s: %w: %d of %d shards (the first %s: %d of %d bytes allocated; fallocate: %v); a bit set when the disk is full is then an error for its request, not a crash",
		dir, ErrUnallocated, u.shards, format.Shards, u.first, u.allocated, u.size, u.err)
}
