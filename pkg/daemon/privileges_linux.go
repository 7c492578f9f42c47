package daemon

import (
	"fmt"
	"os/user"
	"strconv"
	"syscall"
)

// DropPrivileges switches the whole process to the named user and its
// primary group, dropping supplementary groups and, with them, every
// capability root had. Call it after the capture sockets, listeners, state
// and event log are open.
func DropPrivileges(name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("daemon: --user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := syscall.Setgroups([]int{gid}); err != nil {
		return fmt.Errorf("daemon: --user %s: setgroups: %w", name, err)
	}
	if err := syscall.Setgid(gid); err != nil {
		return fmt.Errorf("daemon: --user %s: setgid: %w", name, err)
	}
	if err := syscall.Setuid(uid); err != nil {
		return fmt.Errorf("daemon: --user %s: setuid: %w", name, err)
	}
	return nil
}
