package main_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/redistest"
)

// A --backend (or $URLDEDUPD_BACKEND) that is not a Redis address is
// refused, exit 2, naming the forms taken; nothing is created where a typo
// would have put a state directory (issue 19, item 7: each of these
// created a 512 MiB state in the current directory and exited 0).
func TestBackendRefusesOtherForms(t *testing.T) {
	t.Parallel()
	bad := []string{"redis:/127.0.0.1:1/0", "http://127.0.0.1:1/0", "127.0.0.1:1", "state", "./state", "Redis://127.0.0.1:1/0"}
	for _, b := range bad {
		for _, viaEnv := range []bool{false, true} {
			for _, args := range [][]string{{"init"}, {"filter"}, {"stats"}, {"serve", "--socket", "none"}} {
				cwd := t.TempDir()
				home := t.TempDir() // the default --dir, should a command fall back on it
				argv := args
				if !viaEnv {
					argv = append([]string{"--backend", b}, args...)
				}
				// Bounded: on a backend taken for a directory, serve would run on.
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, binary, argv...)
				cmd.Dir = cwd
				cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+home, "URLDEDUPD_DIR="+filepath.Join(home, "state"))
				if viaEnv {
					cmd.Env = append(cmd.Env, "URLDEDUPD_BACKEND="+b)
				}
				cmd.Stdin = strings.NewReader("http://a.example/\n")
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != 2 || stdout.Len() != 0 {
					t.Errorf("%q (env %v) %v: exit %d, stdout %q, stderr %q; want exit 2", b, viaEnv, args, code, stdout.String(), stderr.String())
				}
				for _, form := range []string{"redis://", "rediss://", "redis-cluster://", "rediss-cluster://", "unix://", "--dir"} {
					if !strings.Contains(stderr.String(), form) {
						t.Errorf("%q %v: stderr %q does not name %s", b, args, stderr.String(), form)
					}
				}
				for _, d := range []string{cwd, home} {
					if ents, _ := os.ReadDir(d); len(ents) != 0 {
						t.Errorf("%q (env %v) %v: %s holds %v", b, viaEnv, args, d, ents)
					}
				}
			}
		}
	}
}

// migrate refuses an address with :// that is not a Redis one, rather than
// creating a directory of that name.
func TestMigrateRefusesOtherForms(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state")
	if _, stderr, code := run(t, nil, "--dir", state, "init"); code != 0 {
		t.Fatal(stderr)
	}
	cwd := t.TempDir()
	cmd := exec.Command(binary, "migrate", "--from", state, "--to", "http://127.0.0.1:1/0")
	cmd.Dir = cwd
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "redis-cluster://") {
		t.Fatalf("migrate --to http://…: %v %q, want exit 2 naming the forms", err, out)
	}
	if ents, _ := os.ReadDir(cwd); len(ents) != 0 {
		t.Fatalf("migrate created %v", ents)
	}
}

// A Redis address that does not parse is a usage error too, and the
// password of one is not echoed.
func TestBackendBadRedisAddress(t *testing.T) {
	t.Parallel()
	_, stderr, code := run(t, nil, "--backend", "redis://127.0.0.1:notaport/0", "stats")
	if code != 2 {
		t.Fatalf("redis://127.0.0.1:notaport/0: exit %d %q, want 2", code, stderr)
	}
	_, stderr, code = run(t, nil, "--backend", "redis:/user:s3cret@127.0.0.1:1/0", "stats")
	if code != 2 || strings.Contains(stderr, "s3cret") {
		t.Fatalf("redis:/user:s3cret@…: exit %d %q, want 2 without the password", code, stderr)
	}
}

// Every form that worked keeps working, and unix:// reaches Redis over its
// socket.
func TestBackendUnixSocket(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "redis.sock")
	redistest.Server(t, "--unixsocket", sock, "--unixsocketperm", "700")
	backend := "unix://" + sock + "?db=0"
	if out, stderr, code := run(t, nil, "--backend", backend, "init"); code != 0 || !strings.HasPrefix(out, "ready ") {
		t.Fatalf("init over unix://: %d %q %q", code, out, stderr)
	}
	in := "http://a.example/\nhttp://b.example/\nhttp://a.example/\n"
	if out, stderr, code := run(t, strings.NewReader(in), "--backend", backend, "filter"); code != 0 || out != "http://a.example/\nhttp://b.example/\n" {
		t.Fatalf("filter over unix://: %d %q %q", code, out, stderr)
	}
	if out, _, code := run(t, strings.NewReader(in), "--backend", backend, "filter"); code != 0 || out != "" {
		t.Fatalf("filter again over unix://: %d %q", code, out)
	}
}
