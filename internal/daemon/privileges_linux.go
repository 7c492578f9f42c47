package daemon

import (
	"fmt"
	"os"
	"syscall"
)

// DropPrivileges switches the whole process to u and its primary group,
// dropping supplementary groups and, with them, every capability root had.
// Call it after the capture sockets, listeners, state and event log are
// open.
func DropPrivileges(u *User) error {
	if err := syscall.Setgroups([]int{u.GID}); err != nil {
		return fmt.Errorf("daemon: user %s: %w", u.Name, fmt.Errorf("setgroups: %w", err))
	}
	if err := syscall.Setgid(u.GID); err != nil {
		return fmt.Errorf("daemon: user %s: %w", u.Name, fmt.Errorf("setgid: %w", err))
	}
	if err := syscall.Setuid(u.UID); err != nil {
		return fmt.Errorf("daemon: user %s: %w", u.Name, fmt.Errorf("setuid: %w", err))
	}
	return nil
}

// canUnlinkIn tells whether u, with only its primary group, may remove an
// entry it owns from dir: write and search permission by the mode bits
// (ACLs are not read).
func canUnlinkIn(dir string, u *User) bool {
	fi, err := os.Stat(dir)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	perm := uint32(fi.Mode().Perm())
	switch {
	case u.UID == 0:
		return true
	case int(st.Uid) == u.UID:
		return perm&0o300 == 0o300
	case int(st.Gid) == u.GID:
		return perm&0o030 == 0o030
	}
	return perm&0o003 == 0o003
}
