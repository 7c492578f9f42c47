package main_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runFor is run with a time limit: a command still running after d is
// killed and the test fails.
func runFor(t *testing.T, d time.Duration, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v: still running after %v", args, d)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// --max-line is a usage error outside 1 … 16 MiB: a huge value used to
// overflow the reader's block size and spin at 100% CPU on a 2 MiB line.
// At the limit, a longer line is reported and skipped.
func TestFilterMaxLineFlag(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	long := strings.Repeat("x", 2<<20) + "\nhttp://after.example/\n"
	for _, v := range []string{"4611686018427387904", "16777217", "0", "-1"} {
		_, stderr, code := runFor(t, 20*time.Second, long, "--dir", dir, "filter", "--max-line", v)
		if code != 2 || !strings.Contains(stderr, "--max-line "+v+": want 1 to 16777216 bytes") {
			t.Errorf("--max-line %s: exit %d, %q", v, code, stderr)
		}
	}
	huge := strings.Repeat("y", 16<<20+1) + "\nhttp://after.example/\n"
	out, stderr, code := runFor(t, 30*time.Second, huge, "--dir", dir, "filter", "--max-line", "16777216")
	if code != 0 || out != "http://after.example/\n" || !strings.Contains(stderr, "-:1: line longer than 16777216 bytes, skipped") {
		t.Fatalf("at the limit: exit %d, out %q, stderr %q", code, out, stderr)
	}
}

// A shard replaced by a symbolic link, even to a valid 2 MiB shard outside
// the state, is refused by every command that opens the state (exit 3,
// naming the shard), and the file outside is never written. The old code
// followed the link: filter, merge, replay and serve wrote into it.
func TestShardSymlinkRefused(t *testing.T) {
	t.Parallel()
	dir := newState(t)
	src := newState(t) // a valid source for merge, its shard 3a also a link
	outside := filepath.Join(t.TempDir(), "outside")
	for _, d := range []string{dir, src} {
		if err := os.Rename(filepath.Join(d, "3a"), outside); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(d, "3a")); err != nil {
			t.Fatal(err)
		}
	}
	zero, _ := os.ReadFile(outside)
	other := newState(t)
	capfile := filepath.Join("..", "..", "internal", "capture", "testdata", "captures", "http.pcap")
	// http://x.example/336 signs into shard 3a, so a filter that followed
	// the link would set a bit in the outside file.
	in := strings.Repeat("http://x.example/336\n", 3) + "http://new.example/\n"
	for _, args := range [][]string{
		{"--dir", dir, "filter"},
		{"--dir", dir, "check", "http://x/"},
		{"--dir", dir, "stats"},
		{"--dir", dir, "snapshot", filepath.Join(t.TempDir(), "snap")},
		{"--dir", dir, "replay", capfile},
		{"--dir", dir, "serve", "--events", filepath.Join(t.TempDir(), "ev")},
		{"merge", "--into", dir, other},
		{"merge", "--into", other, src},
		{"migrate", "--from", dir, "--to", "redis://127.0.0.1:1/0"},
	} {
		_, stderr, code := runFor(t, 30*time.Second, in, args...)
		if code != 3 || !strings.Contains(stderr, "/3a: not a regular file") {
			t.Errorf("%v: exit %d, %q; want exit 3 naming /3a", args, code, stderr)
		}
	}
	if now, _ := os.ReadFile(outside); !bytes.Equal(now, zero) {
		t.Fatal("the file outside the state was written")
	}
}

// SIGTERM (as SIGINT) ends a filter whose standard input is an idle pipe
// at once, exit 130, with what it decided written. The old code waited for
// the next line.
func TestFilterSIGTERMIdleStdin(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(binary, "--dir", dir, "filter", "--mark")
		stdin, _ := cmd.StdinPipe() // kept open and idle
		defer stdin.Close()
		out := &lockedBuffer{}
		cmd.Stdout = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL) })
		line := fmt.Sprintf("http://idle.example/%v", sig)
		fmt.Fprintln(stdin, line)
		for i := 0; !strings.Contains(out.String(), line) && i < 500; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
				t.Fatalf("%v: %v, want exit 130", sig, err)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("%v: filter still running 3 s later with stdin idle", sig)
		}
		if out.String() != "new\t"+line+"\n" {
			t.Fatalf("%v: output %q", sig, out.String())
		}
	}
}

// An unknown command is a usage error (exit 2), as documented.
func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	_, stderr, code := run(t, nil, "--dir", t.TempDir(), "bogus")
	if code != 2 || !strings.Contains(stderr, `unknown command "bogus"`) {
		t.Fatalf("exit %d, %q", code, stderr)
	}
	// compare lived here until it moved to urldedupd-lab: say where.
	if _, stderr, code := run(t, nil, "--dir", t.TempDir(), "compare", "urls.txt"); code != 2 || !strings.Contains(stderr, "urldedupd-lab compare") {
		t.Fatalf("compare: exit %d, %q", code, stderr)
	}
	if out, _, code := run(t, nil); code != 0 || !strings.Contains(out, "Available Commands:") {
		t.Fatalf("no command: exit %d, %q", code, out)
	}
}
