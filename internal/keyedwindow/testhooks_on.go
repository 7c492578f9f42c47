//go:build testhooks

package keyedwindow

import (
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
)

// killHook returns, in binaries built with -tags testhooks, a hook that
// kills the process with SIGKILL the $URLDEDUPD_TEST_KILL_AFTER-th time
// (default 1) a batch's first shard reaches the step
// $URLDEDUPD_TEST_KILL_AT names ("jump", "swept" or "header"): in the
// middle of advancing a shard, before any URL of the batch is decided.
// Without the variable: nil.
func killHook() func(Step, bool) {
	at := map[string]Step{"jump": StepJumpSweep, "swept": StepSwept, "header": StepHeader}[os.Getenv("URLDEDUPD_TEST_KILL_AT")]
	if at == 0 {
		return nil
	}
	after, _ := strconv.ParseInt(os.Getenv("URLDEDUPD_TEST_KILL_AFTER"), 10, 64)
	var n atomic.Int64
	return func(s Step, first bool) {
		if s == at && first && n.Add(1) >= max(after, 1) {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
}
