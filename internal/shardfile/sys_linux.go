package shardfile

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// flock takes a shared or exclusive lock on f, retrying a non-blocking
// attempt until timeout; a negative timeout tries once.
func flock(f *os.File, exclusive bool, timeout time.Duration) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			return err
		}
		if timeout < 0 || time.Now().After(deadline) {
			return ErrLocked
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// syncMap writes a mapping's dirty pages to disk and waits (a variable so
// that tests can count the calls).
var syncMap = func(b []byte) error { return unix.Msync(b, unix.MS_SYNC) }

// populate maps a writable mapping's pages now (best effort: kernels
// before 5.14 have no MADV_POPULATE_WRITE, and the pages are then mapped
// at first touch).
func populate(b []byte) { unix.Madvise(b, unix.MADV_POPULATE_WRITE) }

// writesBack tells a file whose dirty pages the kernel writes to storage:
// not one on tmpfs or ramfs, which live in memory only (when unsure, yes).
func writesBack(f *os.File) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return true
	}
	return st.Type != unix.TMPFS_MAGIC && st.Type != unix.RAMFS_MAGIC
}

// allocatedBytes is the disk space allocated to a file (st_blocks × 512).
func allocatedBytes(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}

// allocate allocates every block of f's first size bytes, leaving the
// content as it is.
func allocate(f *os.File, size int64) error { return unix.Fallocate(int(f.Fd()), 0, 0, size) }

// isUnsupported tells a file system that cannot allocate blocks ahead.
func isUnsupported(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS)
}

func isBadAddress(err error) bool { return errors.Is(err, unix.EFAULT) }

func isNoSpace(err error) bool { return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) }

// openNoFollow opens path without following a symbolic link in its last
// element (ELOOP is reported as ErrNotRegular) and without blocking on a
// FIFO; the caller checks the type of what it opened with f.Stat.
func openNoFollow(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s: %w: a symbolic link (links are not followed)", path, ErrNotRegular)
	}
	return f, err
}
