package api

import (
	"fmt"
	"syscall"
)

// mapBytes maps n bytes of anonymous memory, returned to the system by
// unmapBytes rather than kept by the Go heap.
func mapBytes(n int) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("api: mapping a %d-byte body: %w", n, err)
	}
	return b, nil
}

func unmapBytes(b []byte) { _ = syscall.Munmap(b) }
