package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// maxSocketPath is the longest path a Unix socket address holds: 108
// bytes of sun_path, less the terminating NUL.
const maxSocketPath = 107

// listenUnix listens on a Unix socket with mode (0660 when zero), owned by
// owner when set, replacing a stale socket file left by a process that
// died (connecting to it is refused), but never one a live process serves,
// busy or not, nor anything that is not a socket. The socket is created
// with mode already in force: no client connects in between.
func listenUnix(path string, mode os.FileMode, owner *User) (net.Listener, error) {
	if mode == 0 {
		mode = 0o660
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("daemon: socket %s: %w (%s): remove it or choose another path", path, ErrSocketPathTaken, kind(fi))
		}
		// Only a refused connection means nobody listens: a live server
		// that is busy (its backlog full: EAGAIN) or slow (a timeout) is
		// still there, and its socket must not be taken over.
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("daemon: socket %s: %w", path, ErrSocketInUse)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("daemon: socket %s: %w (connecting to it: %v)", path, ErrSocketInUse, err)
		}
		os.Remove(path)
	}
	if err := makeSocketDir(filepath.Dir(path), owner); err != nil {
		return nil, fmt.Errorf("daemon: socket %s: %w", path, err)
	}
	var l net.Listener
	err := withUmask(int(0o777&^mode.Perm()), func() (err error) {
		l, err = net.Listen("unix", path)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("daemon: listen %s: %w", path, err)
	}
	err = os.Chmod(path, mode)
	if err == nil && owner != nil {
		err = os.Chown(path, owner.UID, owner.GID)
	}
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("daemon: socket %s: %w", path, err)
	}
	return l, nil
}

// makeSocketDir makes the socket's directory and any missing parent, mode
// 0755, giving the directories it made to owner when set (as systemd's
// RuntimeDirectory= would): /run/urldedupd does not exist until someone
// makes it. A directory that exists is left as it is.
func makeSocketDir(dir string, owner *User) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("making its directory: %w", err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			return fmt.Errorf("making its directory: %w", err)
		}
		if owner != nil {
			if err := os.Chown(d, owner.UID, owner.GID); err != nil {
				return fmt.Errorf("making its directory: %w", err)
			}
		}
	}
	return nil
}

// kind names what a file is, for messages.
func kind(fi os.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	default:
		return "a " + m.Type().String() + " file"
	}
}
