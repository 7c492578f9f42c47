package keyedwindow

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/urldedupd/urldedupd/internal/keyed"
)

// FileLocker locks shard i as byte i of a lock file, with an open file
// description (OFD) lock: exclusive between every open of the file, in
// this process or another, and released by the kernel when the process
// dies, so a process killed holding it blocks no one.
type FileLocker struct{ f *os.File }

// LockFileBytes is the size of a lock file: a byte a shard.
const LockFileBytes = keyed.Shards

// OpenFileLocker opens the lock file at path, creating it (LockFileBytes
// of zeros, never written after) when create is set.
func OpenFileLocker(path string, create bool) (*FileLocker, error) {
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("keyedwindow: lock file: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() < LockFileBytes && create {
		err = f.Truncate(LockFileBytes)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("keyedwindow: lock file: %w", err)
	}
	return &FileLocker{f}, nil
}

func (l *FileLocker) lock(i int, typ int16) error {
	lk := unix.Flock_t{Type: typ, Whence: 0, Start: int64(i), Len: 1}
	for {
		err := unix.FcntlFlock(l.f.Fd(), unix.F_OFD_SETLKW, &lk)
		if err != unix.EINTR {
			if err != nil {
				return fmt.Errorf("keyedwindow: lock %s byte %d: %w", l.f.Name(), i, err)
			}
			return nil
		}
	}
}

// Lock locks shard i, waiting for whoever holds it.
func (l *FileLocker) Lock(i int) error { return l.lock(i, unix.F_WRLCK) }

// Unlock unlocks shard i.
func (l *FileLocker) Unlock(i int) error { return l.lock(i, unix.F_UNLCK) }

// Close closes the lock file, releasing whatever this open holds.
func (l *FileLocker) Close() error { return l.f.Close() }
