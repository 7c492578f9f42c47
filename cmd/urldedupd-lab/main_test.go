package main_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "urldedupd-lab-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "urldedupd-lab")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs the built binary with args and returns its output and exit code.
func run(t *testing.T, stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = stdin
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// An unknown command is a usage error; --version names the build.
func TestUsage(t *testing.T) {
	if _, _, code := run(t, nil, "nope"); code != 2 {
		t.Errorf("unknown command: exit %d, want 2", code)
	}
	if out, _, code := run(t, nil, "--version"); code != 0 || !bytes.Contains([]byte(out), []byte("urldedupd-lab version")) {
		t.Errorf("--version: %d %q", code, out)
	}
}
