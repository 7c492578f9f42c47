package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

const noFollow = unix.O_NOFOLLOW | unix.O_CLOEXEC

func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

// syncDir makes the entries of dir durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

// lockNow takes f's exclusive flock, failing if it is taken.
func lockNow(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) }

func unlock(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// flockWait takes f's exclusive flock, retrying until timeout.
func flockWait(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still held after %v", timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// tryLock opens path and takes its flock without waiting (exclusive or
// shared): the file, or nil when a writer holds it (or it went away).
func tryLock(path string, exclusive bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow|unix.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("journal: %s: %w: not a regular file", path, ErrCorrupt)
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("journal: lock %s: %w", path, err)
	}
	return f, nil
}

// giveToOwner gives paths to the owner of the state directory when this
// process is root and they are not the owner's: the journal directory and
// the epoch file that root's filter or forget made must stay usable by the
// user serve runs as (who makes its journal files in the directory and
// maps the epoch file for writing). Best effort: a failure shows later, as
// that user's open error.
func giveToOwner(stateDir string, paths ...string) {
	if os.Geteuid() != 0 {
		return
	}
	var st unix.Stat_t
	if unix.Stat(stateDir, &st) != nil || st.Uid == 0 {
		return
	}
	for _, p := range paths {
		unix.Lchown(p, int(st.Uid), int(st.Gid))
	}
}
