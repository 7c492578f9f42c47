//go:build !testhooks

package keyedwindow

// killHook is nil outside binaries built with -tags testhooks (see
// testhooks_on.go).
func killHook() func(Step, bool) { return nil }
