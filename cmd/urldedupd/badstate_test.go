package main_test

import (
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func newState(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "urldedupd-bad-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec.Command("chmod", "-R", "u+w", base).Run(); os.RemoveAll(base) })
	os.Chmod(base, 0o755) // reachable by the unprivileged user below
	dir := filepath.Join(base, "state")
	if _, stderr, code := run(t, strings.NewReader("http://seen.example/\n"), "--dir", dir, "filter"); code != 0 {
		t.Fatalf("filter: %d %s", code, stderr)
	}
	return dir
}

func sums(t *testing.T, dir string) string {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	h := sha256.New()
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(h, "%s %d %x\n", e.Name(), len(b), crc32.ChecksumIEEE(b))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestBadStateRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		break_  func(dir string)
		wantErr string
		code    int
	}{
		{"truncated shard", func(dir string) { os.Truncate(filepath.Join(dir, "c3"), 4096) },
			"/c3: shard file has the wrong size: 4096 bytes", 3},
		{"wrong metadata version", func(dir string) {
			p := filepath.Join(dir, "urldedupd.meta")
			b, _ := os.ReadFile(p)
			body := strings.Replace(string(b), "urldedupd-state 1", "urldedupd-state 9", 1)
			body = body[:strings.LastIndex(body, "checksum ")]
			os.WriteFile(p, []byte(body+fmt.Sprintf("checksum %08x\n", crc32.ChecksumIEEE([]byte(body)))), 0o644)
		}, "urldedupd.meta: unknown state format version: \"9\"", 3},
		{"metadata is a directory", func(dir string) {
			os.Remove(filepath.Join(dir, "urldedupd.meta"))
			os.Mkdir(filepath.Join(dir, "urldedupd.meta"), 0o755)
		}, "urldedupd.meta: not a regular file", 3},
		{"metadata is a symlink to valid metadata outside", func(dir string) {
			p := filepath.Join(dir, "urldedupd.meta")
			outside := filepath.Join(filepath.Dir(dir), "meta-outside")
			os.Rename(p, outside)
			os.Symlink(outside, p)
		}, "urldedupd.meta: not a regular file", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := newState(t)
			tt.break_(dir)
			before := sums(t, dir)
			for _, args := range [][]string{{"filter"}, {"check", "http://x/"}, {"stats"}, {"init"}} {
				_, stderr, code := run(t, strings.NewReader("http://new.example/\n"), append([]string{"--dir", dir}, args...)...)
				if code != tt.code || !strings.Contains(stderr, tt.wantErr) {
					t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", args, code, stderr, tt.code, tt.wantErr)
				}
			}
			if sums(t, dir) != before {
				t.Fatal("the state's files changed")
			}
		})
	}
}

// A state the user cannot write: filter fails clearly, read-only commands
// still work, and no file changes. As root, permission bits do not bind,
// so the commands run as nobody.
func TestReadOnlyState(t *testing.T) {
	t.Parallel()
	dir := newState(t)
	if err := exec.Command("chmod", "-R", "a-w", dir).Run(); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o555)
	before := sums(t, dir)
	asUser := func(args ...string) (string, string, int) {
		cmd := exec.Command(binary, append([]string{"--dir", dir}, args...)...)
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		cmd.Stdin = strings.NewReader("http://new.example/\n")
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}
	_, stderr, code := asUser("filter")
	if code == 0 || !strings.Contains(stderr, "permission denied") || !strings.Contains(stderr, dir) {
		t.Fatalf("filter on a read-only state: exit %d, %q", code, stderr)
	}
	out, stderr, code := asUser("check", "http://seen.example/", "http://new.example/")
	if code != 0 || out != "dup\thttp://seen.example/\nnew\thttp://new.example/\n" {
		t.Fatalf("check on a read-only state: exit %d, %q %q", code, out, stderr)
	}
	if out, _, code := asUser("stats", "--json"); code != 0 || !strings.Contains(out, `"bits_set": 1,`) {
		t.Fatalf("stats on a read-only state: exit %d, %q", code, out)
	}
	if sums(t, dir) != before {
		t.Fatal("the state's files changed")
	}
}
