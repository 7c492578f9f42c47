package window

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// FileLocker is the Locker of a state on disk: an open file description
// (OFD) lock on the first byte of a lock file, exclusive between every
// open of the file, in this process or another, and released by the
// kernel when the process dies, so a process killed holding it blocks no
// one. An OFD lock belongs to the open file, not to a goroutine: taking it
// again through the same open succeeds at once. So a mutex serialises the
// goroutines that share one FileLocker (serve's connections, the API's
// requests) before they take the file's lock.
type FileLocker struct {
	mu sync.Mutex
	f  *os.File
}

// LockFileBytes is the size of a lock file.
const LockFileBytes = 1

// OpenFileLocker opens the lock file at path, creating it (LockFileBytes
// of zeros, never written after) when create is set.
func OpenFileLocker(path string, create bool) (*FileLocker, error) {
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("window: lock file: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() < LockFileBytes && create {
		err = f.Truncate(LockFileBytes)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("window: lock file: %w", err)
	}
	return &FileLocker{f: f}, nil
}

func (l *FileLocker) lock(i int, typ int16) error {
	lk := unix.Flock_t{Type: typ, Whence: 0, Start: int64(i), Len: 1}
	for {
		err := unix.FcntlFlock(l.f.Fd(), unix.F_OFD_SETLKW, &lk)
		if err != unix.EINTR {
			if err != nil {
				return fmt.Errorf("window: lock %s byte %d: %w", l.f.Name(), i, err)
			}
			return nil
		}
	}
}

// Lock locks, waiting for whoever holds the lock: a goroutine sharing l,
// then another open of the file.
func (l *FileLocker) Lock() error {
	l.mu.Lock()
	if err := l.lock(0, unix.F_WRLCK); err != nil {
		l.mu.Unlock()
		return err
	}
	return nil
}

// Unlock unlocks.
func (l *FileLocker) Unlock() error {
	defer l.mu.Unlock()
	return l.lock(0, unix.F_UNLCK)
}

// Close closes the lock file, releasing whatever this open holds.
func (l *FileLocker) Close() error { return l.f.Close() }
