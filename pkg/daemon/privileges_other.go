//go:build !linux

package daemon

import "errors"

// DropPrivileges is only implemented on Linux.
func DropPrivileges(name string) error { return errors.ErrUnsupported }
