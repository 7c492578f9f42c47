package keyedwindow_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/keyedwindow"
)

// Two opens of one lock file exclude each other on a shard and not on
// another; a lock held by a process that is killed is released.
func TestFileLocker(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, err := keyedwindow.OpenFileLocker(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := keyedwindow.OpenFileLocker(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if fi, err := os.Stat(path); err != nil || fi.Size() != keyedwindow.LockFileBytes {
		t.Fatalf("lock file: %v %v", fi, err)
	}
	if err := a.Lock(7); err != nil {
		t.Fatal(err)
	}
	if err := b.Lock(8); err != nil { // another shard: no wait
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		if err := b.Lock(7); err != nil {
			t.Error(err)
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("shard 7 locked twice")
	case <-time.After(200 * time.Millisecond):
	}
	if err := a.Unlock(7); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(time.Minute):
		t.Fatal("unlocked, and the other open still waits")
	}

	// A process killed while holding shard 3: the next lock does not wait
	// for it.
	holder := exec.Command(os.Args[0], "-test.run", "^TestHelperHoldLock$")
	holder.Env = append(os.Environ(), "KEYEDWINDOW_HOLD="+path)
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
	go func() { locked <- a.Lock(3) }()
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
// starts, which locks shard 3, says so, and waits to be killed.
func TestHelperHoldLock(t *testing.T) {
	path := os.Getenv("KEYEDWINDOW_HOLD")
	if path == "" {
		return // run by TestFileLocker only
	}
	l, err := keyedwindow.OpenFileLocker(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Lock(3); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("held")
	time.Sleep(time.Minute)
}
