//go:build testhooks

package capture

import (
	"bytes"
	"os"
)

// testHooks is true in binaries built with -tags testhooks, for the
// integration tests of panic recovery: a request whose URL contains
// $URLDEDUPD_TEST_PANIC_ON panics in the per-packet path.
const testHooks = true

var panicOn = []byte(os.Getenv("URLDEDUPD_TEST_PANIC_ON"))

func testPanic(url []byte) {
	if len(panicOn) > 0 && bytes.Contains(url, panicOn) {
		panic("test hook: URL contains " + string(panicOn))
	}
}
