package bloomlayout

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// fileLock is an exclusive OFD lock on the first byte of a file: held by
// this open file description, released by the kernel when the process
// dies.
type fileLock struct{ f *os.File }

func openLock(path string, readOnly bool) (*fileLock, error) {
	flag := os.O_RDWR
	if readOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, fmt.Errorf("bloomlayout: lock file: %w", err)
	}
	return &fileLock{f}, nil
}

func (l *fileLock) lock(typ int16) error {
	lk := unix.Flock_t{Type: typ, Whence: 0, Start: 0, Len: 1}
	for {
		err := unix.FcntlFlock(l.f.Fd(), unix.F_OFD_SETLKW, &lk)
		if err != unix.EINTR {
			if err != nil {
				return fmt.Errorf("bloomlayout: lock %s: %w", l.f.Name(), err)
			}
			return nil
		}
	}
}

func (l *fileLock) Lock() error   { return l.lock(unix.F_WRLCK) }
func (l *fileLock) Unlock() error { return l.lock(unix.F_UNLCK) }
func (l *fileLock) Close() error  { return l.f.Close() }
