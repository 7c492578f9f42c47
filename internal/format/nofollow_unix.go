//go:build unix

package format

import "syscall"

// noFollow makes opening a key file that is a symbolic link fail.
const noFollow = syscall.O_NOFOLLOW
