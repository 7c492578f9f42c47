package main_test

import (
	"os/exec"
	"sync/atomic"
	"time"
)

// runPeakRSS runs cmd and returns, with its error, its peak RSS in bytes:
// the VmHWM of its own /proc status (which its exec starts afresh),
// sampled every 5 ms while it runs. The resource usage Wait reports is no
// measure here: on Linux a child that os/exec starts shares the test's
// memory until its exec, and its ru_maxrss carries the test binary's
// high-water mark. VmHWM never falls, so a late sample holds any earlier
// peak; only a peak in the last few ms before exit can go unseen.
func runPeakRSS(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	var peak atomic.Int64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if hwm, _, ok := procStatus(cmd.Process.Pid); ok {
				peak.Store(max(peak.Load(), hwm))
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	<-sampled
	return peak.Load(), err
}
