//go:build !testhooks

package main

import "time"

// testClock is nil, time.Now, outside binaries built with -tags testhooks
// (see testhooks_on.go).
func testClock() func() time.Time { return nil }
