package shardfile

import (
	"errors"
	"os"
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

func syncMap(b []byte) error { return unix.Msync(b, unix.MS_SYNC) }

func isNoSpace(err error) bool { return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) }
