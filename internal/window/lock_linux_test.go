package window_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/window"
)

// Two opens of one lock file exclude each other; a lock held by a process
// that is killed is released.
func TestFileLocker(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, err := window.OpenFileLocker(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := window.OpenFileLocker(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if fi, err := os.Stat(path); err != nil || fi.Size() != window.LockFileBytes {
		t.Fatalf("lock file: %v %v", fi, err)
	}
	if err := a.Lock(); err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		if err := b.Lock(); err != nil {
			t.Error(err)
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("locked twice")
	case <-time.After(200 * time.Millisecond):
	}
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(time.Minute):
		t.Fatal("unlocked, and the other open still waits")
	}

	if err := b.Unlock(); err != nil {
		t.Fatal(err)
	}
	// A process killed while holding the lock: the next lock does not wait
	// for it.
	holder := exec.Command(os.Args[0], "-test.run", "^TestHelperHoldLock$")
	holder.Env = append(os.Environ(), "WINDOW_HOLD="+path)
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if n, _ := out.Read(buf); !strings.HasPrefix(string(buf[:n]), "held") {
		t.Fatalf("holder said %q", buf[:n])
	}
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	locked := make(chan error, 1)
	go func() { locked <- a.Lock() }()
	select {
	case err := <-locked:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the lock of a killed process was not released")
	}
}

// TestHelperHoldLock is not a test: it is the process TestFileLocker
// starts, which locks, says so, and waits to be killed.
func TestHelperHoldLock(t *testing.T) {
	path := os.Getenv("WINDOW_HOLD")
	if path == "" {
		return // run by TestFileLocker only
	}
	l, err := window.OpenFileLocker(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Lock(); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("held")
	time.Sleep(time.Minute)
}

// Goroutines sharing one FileLocker (one open of the lock file, as serve's
// connections share the state's) exclude each other too: an OFD lock
// taken again through the same open would succeed at once. Counted: how
// many times a goroutine found another inside.
func TestFileLockerGoroutines(t *testing.T) {
	l, err := window.OpenFileLocker(filepath.Join(t.TempDir(), "lock"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const goroutines, rounds = 4, 2000
	var inside, overlaps atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if err := l.Lock(); err != nil {
					t.Error(err)
					return
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				runtime.Gosched() // give another goroutine the chance to come in
				inside.Add(-1)
				if err := l.Unlock(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d of %d locks taken while another goroutine held the lock", n, goroutines*rounds)
	}
}
