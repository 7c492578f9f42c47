package daemon

import (
	"fmt"
	"net"
	"os"
	"time"
)

// maxSocketPath is the longest path a Unix socket address holds: 108
// bytes of sun_path, less the terminating NUL.
const maxSocketPath = 107

// listenUnix listens on a Unix socket with mode (0660 when zero), owned by
// owner when set, replacing a stale socket file left by a process that
// died, but never one a live process serves, nor anything that is not a
// socket. The socket is created with mode already in force: no client
// connects in between.
func listenUnix(path string, mode os.FileMode, owner *User) (net.Listener, error) {
	if mode == 0 {
		mode = 0o660
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("daemon: socket %s: %w (%s): remove it or give another --socket", path, ErrSocketPathTaken, kind(fi))
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("daemon: socket %s: %w", path, ErrSocketInUse)
		}
		os.Remove(path)
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
