package main_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// userTree makes a directory tree the given user can walk (but not write):
// the test's temporary directory and its parent made 0755.
func userTree(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	for _, d := range []string{tmp, filepath.Dir(tmp)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return tmp
}

// lookupUser returns a user's uid and primary gid.
func lookupUser(t *testing.T, name string) (uid, gid int) {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// metric reads one sample, by its full name with labels, from serve's
// /metrics; -1 when it is missing.
func metric(t *testing.T, c *http.Client, name string) float64 {
	t.Helper()
	v, err := readMetric(c, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readMetric(c *http.Client, name string) (float64, error) {
	resp, err := c.Get("http://urldedupd/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return -1, sc.Err()
}

// waitMetric waits, bounded, until a metric has the value wanted.
func waitMetric(t *testing.T, c *http.Client, name string, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := metric(t, c, name)
		if v == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v, want %v", name, v, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fetchPaths requests http://192.0.2.1:8080/PREFIX/i for i in [from, to)
// from the client namespace, with one curl.
func fetchPaths(t *testing.T, cli, prefix string, from, to int) {
	t.Helper()
	var cfg strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&cfg, "url = \"http://192.0.2.1:8080/%s/%d\"\n", prefix, i)
	}
	p := filepath.Join(t.TempDir(), "curl.cfg")
	os.WriteFile(p, []byte(cfg.String()), 0o644)
	if out, err := nettest.Command(cli, "curl", "-s", "--max-time", "30", "-o", "/dev/null", "-K", p).CombinedOutput(); err != nil {
		t.Fatalf("curl: %v %s", err, out)
	}
}

func paths(prefix string, from, to int) []string {
	var u []string
	for i := from; i < to; i++ {
		u = append(u, fmt.Sprintf("http://192.0.2.1:8080/%s/%d", prefix, i))
	}
	return u
}

// The documented --user set-up: state and log directory root's, serve
// --user nobody. The log is rotated and SIGHUP cannot open a new one
// (EACCES): events keep going to the old file, capture keeps running, the
// metrics say so; once the directory is writable, the next SIGHUP switches
// to the new file. SIGTERM then exits 0 and removes the socket.
func TestServeUserEventLogReopenFails(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")
	uid, gid := lookupUser(t, "nobody")
	tmp := userTree(t)
	dir, logDir, runDir := filepath.Join(tmp, "state"), filepath.Join(tmp, "log"), filepath.Join(tmp, "run")
	os.Mkdir(logDir, 0o755)
	os.Mkdir(runDir, 0o755)
	os.Chown(runDir, uid, gid) // as systemd's RuntimeDirectory would
	events, sock := filepath.Join(logDir, "events.jsonl"), filepath.Join(runDir, "api.sock")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	var stderr lockedBuffer
	cmd, _ := serveLogging(t, &stderr, []string{"ip", "netns", "exec", srv}, dir,
		"--iface", srvIf, "--bpf", "tcp port 8080", "--events", events, "--socket", sock, "--user", "nobody")
	c := unixClient(sock)
	nettest.WaitListen(t, srv, 8080)
	fetchPaths(t, cli, "a", 0, 10)
	if got := waitLines(t, events, 10); len(got) != 10 {
		t.Fatalf("before rotation: %d events", len(got))
	}

	if err := os.Rename(events, events+".1"); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	waitMetric(t, c, "urldedupd_event_log_reopen_failures_total", 1)
	if v := metric(t, c, "urldedupd_event_log_stale"); v != 1 {
		t.Fatalf("stale = %v after a failed reopen", v)
	}
	fetchPaths(t, cli, "b", 0, 10)
	got := waitLines(t, events+".1", 20)
	if want := append(paths("a", 0, 10), paths("b", 0, 10)...); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("the old file after the failed reopen holds %q, want %q", got, want)
	}
	if _, err := os.Lstat(events); err == nil {
		t.Fatal("a new event log appeared though its directory is root's")
	}
	if v := metric(t, c, `urldedupd_source_up{source="`+srvIf+`"}`); v != 1 {
		t.Fatalf("source_up = %v after the failed reopen", v)
	}
	waitLog(t, &stderr, "event log not reopened")
	if !strings.Contains(stderr.String(), "permission denied") {
		t.Fatalf("serve did not say why the reopen failed:\n%s", stderr.String())
	}

	os.Chown(logDir, uid, gid)
	cmd.Process.Signal(syscall.SIGHUP)
	waitMetric(t, c, "urldedupd_event_log_stale", 0)
	fetchPaths(t, cli, "c", 0, 10)
	if got := waitLines(t, events, 10); strings.Join(got, " ") != strings.Join(paths("c", 0, 10), " ") {
		t.Fatalf("the new file holds %q", got)
	}
	if got := eventURLs(t, events+".1"); len(got) != 20 {
		t.Fatalf("the old file now holds %d events, want 20", len(got))
	}
	if v := metric(t, c, "urldedupd_event_log_lost_records_total"); v != 0 {
		t.Fatalf("lost records = %v", v)
	}
	stopServe(t, cmd)
	if _, err := os.Lstat(sock); err == nil {
		t.Fatal("the socket is still there after exit")
	}
}

// Under --user the socket belongs to the user and its primary group, with
// --socket-mode: the user and its group connect, others do not. SIGTERM
// exits 0 and removes the socket when its directory is the user's; when
// the directory is root's, serve says at start that the socket will stay.
func TestServeUserSocket(t *testing.T) {
	t.Parallel()
	uid, gid := lookupUser(t, "nobody")
	tmp := userTree(t)
	dir, runDir := filepath.Join(tmp, "state"), filepath.Join(tmp, "run")
	os.Mkdir(runDir, 0o755)
	os.Chown(runDir, uid, gid)
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	sock := filepath.Join(runDir, "api.sock")
	cmd, _ := serveIn(t, nil, dir, "--socket", sock, "--user", "nobody")
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != uid || int(st.Gid) != gid || fi.Mode().Perm() != 0o660 {
		t.Fatalf("socket %v owned by %d:%d, want %d:%d and 0660", fi.Mode(), st.Uid, st.Gid, uid, gid)
	}
	const other = 54321 // a uid with no account
	for _, tc := range []struct {
		name     string
		uid, gid int
		want     string
	}{
		{"the user", uid, gid, "200 new"},
		{"its group", other, gid, "200 dup"},
		{"anyone else", other, other, "000 "},
	} {
		curl := exec.Command("curl", "-s", "--max-time", "10", "--unix-socket", sock, "-w", "%{http_code} ",
			"--data-binary", "http://as-user.example/\n", "http://x/v1/check")
		curl.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(tc.uid), Gid: uint32(tc.gid)}}
		out, _ := curl.Output()
		// curl prints the body, then the code.
		got := strings.TrimSpace(string(out))
		if body, code, ok := strings.Cut(got, "\n"); ok {
			got = code + " " + body
		}
		if strings.TrimSpace(got) != strings.TrimSpace(tc.want) {
			t.Errorf("%s (uid %d gid %d): %q, want %q", tc.name, tc.uid, tc.gid, got, tc.want)
		}
	}
	stopServe(t, cmd)
	if _, err := os.Lstat(sock); err == nil {
		t.Fatal("the socket is still there after exit")
	}

	// The default socket, in the state directory root created: nobody
	// cannot remove it, and serve says so at start; it still exits 0, and
	// the next start replaces the stale socket.
	var stderr lockedBuffer
	cmd, sock = serveLogging(t, &stderr, nil, dir, "--user", "nobody")
	waitLog(t, &stderr, "the socket will stay after exit")
	stopServe(t, cmd)
	cmd, _ = serveIn(t, nil, dir, "--user", "nobody")
	if code, body := post(t, unixClient(sock), "/v1/check", "http://as-user.example/\n"); code != 200 || body != "dup\n" {
		t.Fatalf("after restart on a stale socket: %d %q", code, body)
	}
	stopServe(t, cmd)
}

// The event log's file system fills up: records are dropped and counted,
// capture keeps running, and once there is room again new records are
// written. Needs root to mount a small tmpfs.
func TestServeEventLogFull(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")
	tmp := t.TempDir()
	mnt := mountFS(t, "tmpfs", "-o", "size=1m")
	dir, events := filepath.Join(tmp, "state"), filepath.Join(mnt, "events.jsonl")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	var stderr lockedBuffer
	cmd, sock := serveLogging(t, &stderr, []string{"ip", "netns", "exec", srv}, dir,
		"--iface", srvIf, "--bpf", "tcp port 8080", "--events", events)
	c := unixClient(sock)
	nettest.WaitListen(t, srv, 8080)

	// The event log is still empty: with every page of the tmpfs taken,
	// no byte of a record fits (no torn record).
	filler := filepath.Join(mnt, "filler")
	f, _ := os.Create(filler)
	if _, err := io.Copy(f, io.LimitReader(zeros{}, 2<<20)); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("filling the tmpfs: %v", err)
	}
	f.Close()
	fetchPaths(t, cli, "b", 0, 10)
	waitMetric(t, c, "urldedupd_event_log_lost_records_total", 10)
	if v := metric(t, c, `urldedupd_source_up{source="`+srvIf+`"}`); v != 1 {
		t.Fatalf("source_up = %v with the disk full", v)
	}
	waitLog(t, &stderr, `"msg":"event log: records could not be written; capture goes on"`)
	if !strings.Contains(stderr.String(), "no space left on device") {
		t.Fatalf("serve did not say why:\n%s", stderr.String())
	}

	os.Remove(filler)
	fetchPaths(t, cli, "c", 0, 10)
	if got := waitLines(t, events, 10); strings.Join(got, " ") != strings.Join(paths("c", 0, 10), " ") {
		t.Fatalf("event log after the disk had room again: %q", got)
	}
	waitLog(t, &stderr, `"msg":"event log: writing again","lost_total":10`)
	// The metrics are gathered from the capture's counts, which may lag
	// the event log's records on a loaded machine (failed in a fresh
	// clone's make test beside stress-ng: 10, want 20): wait, bounded.
	waitMetric(t, c, `urldedupd_capture_new_total{source="`+srvIf+`"}`, 20)
	stopServe(t, cmd)
}

// waitLog waits, bounded, until serve's log holds s.
func waitLog(t *testing.T, log *lockedBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("serve's log lacks %q:\n%s", s, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
