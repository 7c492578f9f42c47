package daemon

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/state"
)

// A serve that exits removes its own socket, never one that another serve
// made at the path while this one was shutting down (here: while the
// state is synced, after the API's listener closed).
func TestExitKeepsAnotherServesSocket(t *testing.T) {
	dir, events := stateAndLog(t)
	sock := filepath.Join(t.TempDir(), "api.sock")
	var other net.Listener
	sync := func() error { // the other serve starts now
		var err error
		other, err = listenUnix(sock, 0, nil)
		return err
	}
	d, err := New(dir, Config{Socket: sock, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	d.afterSync = sync
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := d.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if other == nil {
		t.Fatal("the other serve did not start")
	}
	defer other.Close()
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("the other serve's socket is gone: %v", err)
	}
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		t.Fatalf("dial the other serve: %v", err)
	}
	c.Close()
}

// Without another serve, the socket is gone after Run.
func TestExitRemovesSocket(t *testing.T) {
	dir, events := stateAndLog(t)
	sock := filepath.Join(t.TempDir(), "api.sock")
	d, err := New(dir, Config{Socket: sock, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := d.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left after Run: %v", err)
	}
}

// stateAndLog opens a new state and event log, closed when the test ends.
func stateAndLog(t *testing.T) (*state.State, *EventLog) {
	t.Helper()
	tmp := t.TempDir()
	dir, err := state.Open(context.Background(), filepath.Join(tmp, "state"), &state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	events, err := OpenEventLog(filepath.Join(tmp, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { events.Close() })
	return dir, events
}
