package daemon

import "syscall"

// withUmask runs f with the process umask set to mask. Only for start-up,
// while no other goroutine creates files.
func withUmask(mask int, f func() error) error {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	return f()
}
