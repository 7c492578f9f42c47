package main_test

import (
	"bufio"
	"fmt"
	"hash/crc32"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// urlInShard returns a URL, already in normal form, whose CRC32 signature
// falls in shard sh.
func urlInShard(t *testing.T, sh byte, tag string) string {
	t.Helper()
	for i := range 100_000 {
		u := fmt.Sprintf("http://%s.example/%d", tag, i)
		if byte(crc32.ChecksumIEEE([]byte(u))>>24) == sh {
			return u
		}
	}
	t.Fatalf("no URL in shard %02x", sh)
	return ""
}

// truncate shrinks a shard with truncate(1), as an operator or another
// program would, under the running process.
func truncate(t *testing.T, path string) {
	t.Helper()
	if out, err := exec.Command("truncate", "-s", "0", path).CombinedOutput(); err != nil {
		t.Fatalf("truncate: %v %s", err, out)
	}
}

// A shard truncated under a running serve: a request that touches it gets
// a 5xx error naming the shard, serve stays up, and URLs in other shards
// are still decided. The old code died of SIGBUS.
func TestServeTruncatedShard(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	cmd, sock := serve(t, dir)
	c := unixClient(sock)
	in3a, other := urlInShard(t, 0x3a, "lost"), urlInShard(t, 0x3b, "kept")
	if code, body := post(t, c, "/v1/check", in3a+"\n"); code != 200 || body != "new\n" {
		t.Fatalf("before: %d %q", code, body)
	}
	truncate(t, filepath.Join(dir, "3a"))
	for i := range 3 { // every request that touches it, not only the first
		code, body := post(t, c, "/v1/check", other+"\n"+in3a+"\n")
		if code < 500 || !strings.Contains(body, dir+"/3a: shard file shrank") {
			t.Fatalf("request %d touching the truncated shard: %d %q, want 5xx naming it", i, code, body)
		}
	}
	resp, err := c.Get("http://urldedupd/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 500 || !strings.Contains(string(b), "/3a") {
		t.Fatalf("stats: %d %q", resp.StatusCode, b)
	}
	if code, body := post(t, c, "/v1/check", other+"\n"+other+"\n"); code != 200 || body != "new\ndup\n" {
		t.Fatalf("other shard after: %d %q", code, body)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("serve is gone: %v", err)
	}
}

// A filter whose shard is truncated mid-run ends with exit 3 and an error
// naming the shard, after writing what it had decided. The old code died
// of SIGBUS (exit 2 and a Go stack trace).
func TestFilterTruncatedShardMidRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	cmd := exec.Command(binary, "--dir", dir, "filter")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL) })
	first := urlInShard(t, 0x01, "first")
	fmt.Fprintln(stdin, first)
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case l := <-lines:
		if l != first {
			t.Fatalf("first line %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("first URL not answered")
	}
	truncate(t, filepath.Join(dir, "3a"))
	fmt.Fprintln(stdin, urlInShard(t, 0x3a, "lost"))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("filter still running 10 s after touching the truncated shard")
	}
	stdin.Close()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 || !strings.Contains(stderr.String(), dir+"/3a: shard file shrank") {
		t.Fatalf("exit %v, stderr %q; want exit 3 naming %s/3a", err, stderr.String(), dir)
	}
	for l := range lines {
		t.Fatalf("printed %q after the fault", l)
	}
}
