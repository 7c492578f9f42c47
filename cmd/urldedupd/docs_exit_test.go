package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/format"
)

// The exit codes docs/operations.md gives, checked on the binary (issue
// 19, item 11: each of these disagreed with the docs).

// init refuses a Bloom-family parameter given as 0 (inside, 0 means "the
// default"), exit 2, and creates nothing: --groups 0 made 4 groups.
func TestInitRefusesExplicitZero(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--layout", "mdbf", "--size", "1MiB", "--groups", "0"},
		{"--layout", "mdbf", "--size", "1MiB", "--k", "0"},
		{"--layout", "mdbf", "--size", "1MiB", "--v1-bits", "0"},
		{"--layout", "bloom", "--size", "1MiB", "--k", "0"},
		{"--layout", "dsbf", "--size", "1MiB", "--children", "0"},
		{"--layout", "dsbf", "--size", "1MiB", "--fmax", "0"},
		{"--layout", "keyed", "--capacity", "1000", "--false-dup", "0"},
	} {
		dir := filepath.Join(t.TempDir(), "state")
		_, stderr, code := run(t, nil, append([]string{"--dir", dir, "init"}, args...)...)
		flag := args[len(args)-2]
		if code != 2 || !strings.Contains(stderr, flag+" 0") {
			t.Errorf("init %v: exit %d %q; want 2 naming %s", args, code, stderr, flag)
		}
		if _, err := os.Lstat(dir); err == nil {
			t.Errorf("init %v made %s", args, dir)
		}
	}
	// The default is still had by leaving the flag out.
	dir := filepath.Join(t.TempDir(), "state")
	if out, stderr, code := run(t, nil, "--dir", dir, "init", "--layout", "mdbf", "--size", "1MiB"); code != 0 || !strings.Contains(out, "4 groups") {
		t.Fatalf("init --layout mdbf: %d %q %q", code, out, stderr)
	}
}

// serve refuses a --listen whose port is not a port, exit 2, before
// anything is opened (it failed at bind, exit 1, after creating the state).
func TestServeListenNotAPort(t *testing.T) {
	t.Parallel()
	for _, listen := range []string{"127.0.0.1:notaport", "127.0.0.1:65536", "127.0.0.1:-1"} {
		dir := filepath.Join(t.TempDir(), "state")
		_, stderr, code := run(t, nil, "--dir", dir, "serve", "--socket", "none", "--listen", listen)
		if code != 2 || !strings.Contains(stderr, "--listen") {
			t.Errorf("--listen %s: exit %d %q; want 2", listen, code, stderr)
		}
		if _, err := os.Lstat(dir); err == nil {
			t.Errorf("--listen %s: the state was created", listen)
		}
	}
}

// A bad key file is a bad state, exit 3, whether the state's own
// (TestKeyedKeyFileRefused) or the one init --key-file is given; nothing
// is created.
func TestInitBadKeyFileExit3(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	key := filepath.Join(tmp, "fleet.key")
	if _, stderr, code := run(t, nil, "--dir", filepath.Join(tmp, "a"), "init", "--layout", "keyed", "--key-file", key); code != 0 {
		t.Fatal(stderr)
	}
	for _, spoil := range []func(){
		func() { os.Chmod(key, 0o644) },
		func() { os.WriteFile(key, []byte("not a key\n"), 0o600) },
	} {
		spoil()
		dir := filepath.Join(tmp, "b")
		_, stderr, code := run(t, nil, "--dir", dir, "init", "--layout", "keyed", "--key-file", key)
		if code != 3 || !strings.Contains(stderr, key) || !strings.Contains(stderr, "bad key file") {
			t.Errorf("init --key-file (spoilt): exit %d %q; want 3 naming %s", code, stderr, key)
		}
		if _, err := os.Lstat(filepath.Join(dir, format.KeyName)); err == nil {
			t.Error("a key file was written")
		}
	}
}
