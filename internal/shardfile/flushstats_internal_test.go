package shardfile

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The background flush counts what it did: successes move LastOK, a
// failure keeps it, counts itself and keeps its error (naming the shard)
// until a flush succeeds again.
func TestFlushStats(t *testing.T) {
	real := syncMap
	var failing atomic.Bool
	syncMap = func(b []byte) error {
		if failing.Load() {
			return syscall.EIO
		}
		return real(b)
	}
	d, err := Open(filepath.Join(t.TempDir(), "s"), &Options{Create: true, FlushInterval: 10 * time.Millisecond})
	if err != nil {
		syncMap = real
		t.Fatal(err)
	}
	defer func() {
		failing.Store(false)
		d.Close()
		syncMap = real // the flush goroutine has ended
	}()
	// wait polls FlushStats until ok says so, for 30 s at most.
	wait := func(what string, ok func(FlushStats) bool) FlushStats {
		t.Helper()
		for range 3000 {
			if f := d.FlushStats(); ok(f) {
				return f
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("waiting for %s: %+v", what, d.FlushStats())
		return FlushStats{}
	}
	f := wait("two flushes", func(f FlushStats) bool { return f.Flushes >= 2 })
	if f.Interval != 10*time.Millisecond || f.Failures != 0 || f.Err != nil || f.LastFailure != nil || f.LastOK.IsZero() || f.Last <= 0 {
		t.Fatalf("after good flushes: %+v", f)
	}
	failing.Store(true)
	failedAt := time.Now()
	f = wait("a failed flush", func(f FlushStats) bool { return f.Failures >= 1 && f.Err != nil })
	if !errors.Is(f.Err, syscall.EIO) || !strings.Contains(f.Err.Error(), d.Path()) {
		t.Fatalf("the failure's error: %v", f.Err)
	}
	f = wait("more failed flushes", func(f FlushStats) bool { return f.Failures >= 3 })
	if f.LastOK.After(failedAt) {
		t.Fatalf("LastOK %v moved after the flushes began to fail (%v)", f.LastOK, failedAt)
	}
	failing.Store(false)
	recovered := time.Now()
	f = wait("a good flush again", func(f FlushStats) bool { return f.Err == nil && f.LastOK.After(recovered) })
	if f.Failures < 3 || f.Flushes <= f.Failures || !errors.Is(f.LastFailure, syscall.EIO) {
		t.Fatalf("after recovery: %+v", f)
	}
}

// A Dir without a background flush says so.
func TestFlushStatsNone(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "s"), &Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if f := d.FlushStats(); f.Interval != 0 || f.Flushes != 0 || !f.LastOK.IsZero() {
		t.Fatalf("%+v, want none", f)
	}
}

// FlushStats answers while a flush is in progress, however
// long it takes: serve's main loop and its metrics read it.
func TestFlushStatsDoesNotWait(t *testing.T) {
	real := syncMap
	var hold atomic.Bool
	var entered sync.Once
	inFlush, release := make(chan struct{}), make(chan struct{})
	syncMap = func(b []byte) error {
		if hold.Load() {
			entered.Do(func() { close(inFlush) })
			<-release
		}
		return real(b)
	}
	hold.Store(true)
	d, err := Open(filepath.Join(t.TempDir(), "s"), &Options{Create: true, FlushInterval: time.Millisecond})
	if err != nil {
		syncMap = real
		t.Fatal(err)
	}
	defer func() {
		hold.Store(false)
		d.Close()
		syncMap = real
	}()
	<-inFlush // a flush holds the Dir's lock now, until release
	got := make(chan FlushStats, 1)
	go func() { got <- d.FlushStats() }()
	select {
	case f := <-got:
		if f.Flushes != 0 {
			t.Errorf("%+v, want no flush ended yet", f)
		}
	case <-time.After(30 * time.Second):
		t.Error("FlushStats waited for the flush in progress")
	}
	hold.Store(false)
	close(release)
}
