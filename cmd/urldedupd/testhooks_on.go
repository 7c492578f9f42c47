//go:build testhooks

package main

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// testClock returns, in binaries built with -tags testhooks, the clock
// of $URLDEDUPD_TEST_CLOCK: a file whose first 8 bytes are the time in
// Unix nanoseconds (native order), mapped shared, so that a test moves
// the clock of every process at once and crosses generations in
// milliseconds. Without the variable: nil, time.Now.
func testClock() func() time.Time {
	p := os.Getenv("URLDEDUPD_TEST_CLOCK")
	if p == "" {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		panic(fmt.Sprintf("test clock: %v", err))
	}
	defer f.Close()
	b, err := unix.Mmap(int(f.Fd()), 0, 8, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		panic(fmt.Sprintf("test clock: %s: %v", p, err))
	}
	v := (*int64)(unsafe.Pointer(&b[0]))
	return func() time.Time { return time.Unix(0, atomic.LoadInt64(v)) }
}
