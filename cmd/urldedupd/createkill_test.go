package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/shardfile"
)

// countShards returns how many shard files dir holds, and whether it has
// its metadata.
func countShards(dir string) (shards int, meta bool) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if n := e.Name(); len(n) == 2 && strings.Trim(n, "0123456789abcdef") == "" {
			shards++
		} else if n == shardfile.MetaName {
			meta = true
		}
	}
	return shards, meta
}

// killWhen starts the binary with args and kills it (SIGKILL) as soon as
// the state directory holds at least n shard files, polling; it reports
// whether the kill came before the creation was complete.
func killWhen(t *testing.T, dir string, n int, args ...string) (interrupted bool) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = strings.NewReader("http://first.example/\n")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(5 * time.Minute) // a bound, not a speed
	for {
		select {
		case err := <-done:
			_, meta := countShards(dir)
			if !meta {
				t.Fatalf("%v ended (%v) leaving no metadata", args, err)
			}
			return false // it finished before it could be caught
		default:
		}
		if s, _ := countShards(dir); s >= n && (n > 0 || dirHasMarker(dir)) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			t.Fatalf("%v: %d shards never appeared", args, n)
		}
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	_, meta := countShards(dir)
	return !meta
}

func dirHasMarker(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, shardfile.CreatingName))
	return err == nil
}

// init (or the first filter) killed with SIGKILL while it creates the
// state, at several moments of the creation, leaves a state that the next
// init or filter creates anew, complete (issue 19, item 8: every command,
// init included, exited 3 and the directory had to be removed by hand).
func TestCreationKilled(t *testing.T) {
	t.Parallel()
	caught := 0
	for _, tt := range []struct {
		shards int
		args   []string
		again  []string
	}{
		{1, []string{"init"}, []string{"init"}},
		{128, []string{"init"}, []string{"filter"}},
		{256, []string{"init"}, []string{"init"}},
		{64, []string{"filter"}, []string{"filter"}},
		{32, []string{"init", "--layout", "keyed"}, []string{"init", "--layout", "keyed"}},
	} {
		dir := filepath.Join(t.TempDir(), "state")
		if !killWhen(t, dir, tt.shards, append([]string{"--dir", dir}, tt.args...)...) {
			t.Logf("%v finished before %d shards were seen: not a test of a kill", tt.args, tt.shards)
			os.RemoveAll(dir)
			continue
		}
		caught++
		// Until made again, it is no state (exit 3) for commands that do
		// not create.
		if _, stderr, code := run(t, nil, "--dir", dir, "stats"); code != 3 || !strings.Contains(stderr, "interrupted") {
			t.Fatalf("stats after a killed %v at %d shards: %d %q, want 3 saying the creation was interrupted", tt.args, tt.shards, code, stderr)
		}
		out, stderr, code := run(t, strings.NewReader("http://a.example/\n"), append([]string{"--dir", dir}, tt.again...)...)
		if code != 0 {
			t.Fatalf("%v after a killed %v at %d shards: %d %q", tt.again, tt.args, tt.shards, code, stderr)
		}
		if tt.again[0] == "init" && !strings.HasPrefix(out, "created ") || tt.again[0] == "filter" && out != "http://a.example/\n" {
			t.Fatalf("%v after a killed %v: %q", tt.again, tt.args, out)
		}
		if s, meta := countShards(dir); s != 256 || !meta || dirHasMarker(dir) {
			t.Fatalf("after %v: %d shards, metadata %v, marker %v", tt.again, s, meta, dirHasMarker(dir))
		}
		out, stderr, code = run(t, strings.NewReader("http://z.example/\nhttp://z.example/\n"), "--dir", dir, "filter", "--mark")
		if code != 0 || out != "new\thttp://z.example/\ndup\thttp://z.example/\n" {
			t.Fatalf("filter on the state made again: %d %q %q", code, out, stderr)
		}
		os.RemoveAll(dir) // 512 MiB
	}
	if caught == 0 {
		t.Fatal("no creation was caught before it finished")
	}
	t.Logf("%d creations killed midway, each made again", caught)
}
