package main_test

import (
	le "encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/journal"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

// journaled counts the signatures in the journal files of state dir.
func journaled(t *testing.T, dir string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, journal.Dir, "*.log"))
	n := 0
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			continue // removed by a checkpoint meanwhile
		}
		var hdr [16]byte
		f.ReadAt(hdr[:], 0)
		id := le.LittleEndian.Uint64(hdr[8:]) // the header names the state
		tail, _ := journal.Scan(f, id, func(uint64, []signature.Signature) error { return nil })
		f.Close()
		n += tail.Sigs
	}
	return n
}

// A power loss with serve's journal: two serves share a keyed state, one
// answers URLs new, the other forgets some of them, and both die with
// SIGKILL; the shards are then put back as the disk had them at the
// forget's sync, as if no page had been written back since. The next
// writable open replays the journal: every URL answered new is a
// duplicate again (none new twice), and no forgotten URL comes back (none
// lost: a forgotten URL must answer new).
func TestJournalSurvivesPowerLoss(t *testing.T) {
	t.Parallel()
	needRESPClients(t)
	dir := filepath.Join(t.TempDir(), "state")
	if _, stderr, code := run(t, nil, "--dir", dir, "init", "--layout", "keyed"); code != 0 {
		t.Fatal(stderr)
	}
	start := func(name string) (*os.Process, string) {
		port := freePort(t)
		cmd, _ := serve(t, dir, "--events", os.DevNull, "--socket", filepath.Join(t.TempDir(), name+".sock"),
			"--resp-listen", "127.0.0.1:"+port, "--flush-interval", "20ms")
		waitDial(t, "tcp", "127.0.0.1:"+port, 10*time.Second, "serve did not listen on --resp-listen")
		return cmd.Process, port
	}
	a, portA := start("a")
	b, portB := start("b")

	urls := func(prefix string, n int) []string {
		u := make([]string, n)
		for i := range u {
			u[i] = fmt.Sprintf("http://power.example/%s/%d", prefix, i)
		}
		return u
	}
	xs, ys := urls("x", 600), urls("y", 400)
	forgotten, kept := xs[:200], xs[200:]
	madd := func(port string, items []string) {
		t.Helper()
		out := redisCLI(t, port, nil, append([]string{"BF.MADD", "urls"}, items...)...)
		if got := strings.Count(out, "1"); out != strings.Repeat("1\n", len(items)-1)+"1" {
			t.Fatalf("BF.MADD of %d new URLs: %d answered new", len(items), got)
		}
	}
	madd(portA, xs)
	out := redisCLI(t, portB, nil, append([]string{"BF.FORGET", "urls"}, forgotten...)...)
	if out != strings.Repeat("1\n", len(forgotten)-1)+"1" {
		t.Fatalf("BF.FORGET: %q", out)
	}
	// The forget synced every shard: the disk now holds kept, not
	// forgotten. Nothing is decided until the image is taken.
	disk := statetest.TakeDisk(t, dir)
	madd(portA, ys)
	// Wait until serve a's journal holds every URL it answered new (its
	// flushes write it every 20 ms; bounded, for a loaded machine).
	for i := 0; journaled(t, dir) < len(xs)+len(ys); i++ {
		if i == 600 {
			t.Fatalf("the journal holds %d URLs after 30 s, want %d", journaled(t, dir), len(xs)+len(ys))
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range []*os.Process{a, b} {
		syscall.Kill(p.Pid, syscall.SIGKILL)
		p.Wait()
	}
	if n := disk.Restore(t, dir); n == 0 {
		t.Fatal("restoring the disk changed no page: ys were never set?")
	}

	// Read-only, nothing is replayed: the power loss shows, and check says
	// the journal waits.
	all := append(append([]string{}, xs...), ys...)
	answers := func(stdout string) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
			if a, u, ok := strings.Cut(l, "\t"); ok {
				m[u] = a
			}
		}
		return m
	}
	stdout, stderr, code := run(t, nil, append([]string{"--dir", dir, "check"}, all...)...)
	if code != 0 && code != 1 {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "not yet replayed") {
		t.Errorf("check on an unreplayed journal did not warn: %q", stderr)
	}
	before := answers(stdout)
	lostToPower := 0
	for _, u := range ys {
		if before[u] == "new" {
			lostToPower++
		}
	}
	if lostToPower != len(ys) {
		t.Fatalf("before the replay %d of %d URLs set after the image answer new; the test's power loss did not take them", lostToPower, len(ys))
	}

	// A writable open replays.
	if _, stderr, code := run(t, strings.NewReader(""), "--dir", dir, "filter"); code != 0 || !strings.Contains(stderr, "replayed the journals of 2 processes") {
		t.Fatalf("filter: exit %d, %q", code, stderr)
	}
	stdout, stderr, code = run(t, nil, append([]string{"--dir", dir, "check"}, all...)...)
	if code != 0 && code != 1 {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	after := answers(stdout)
	twice, lost := 0, 0
	for _, u := range append(append([]string{}, kept...), ys...) {
		if after[u] != "dup" {
			twice++ // answered new before the power loss, would be new again
		}
	}
	for _, u := range forgotten {
		if after[u] != "new" {
			lost++ // forgotten, yet replay brought it back: never new again
		}
	}
	if twice != 0 || lost != 0 {
		t.Fatalf("after the replay: %d URLs would be answered new twice, %d forgotten URLs came back (lost)", twice, lost)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, journal.Dir, "*.log")); len(files) != 0 {
		t.Errorf("journals left after the replay: %v", files)
	}
}
