package main_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
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
