//go:build !linux

package daemon

import "errors"

// DropPrivileges is only implemented on Linux.
func DropPrivileges(u *User) error { return errors.ErrUnsupported }

func canUnlinkIn(dir string, u *User) bool { return false }
