package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// eventURLs reads an event log's records, failing on a malformed one.
func eventURLs(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var urls []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l == "" {
			continue
		}
		var r struct {
			URL string `json:"url"`
			New bool   `json:"new"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || !r.New {
			t.Fatalf("%s: record %q: %v", path, l, err)
		}
		urls = append(urls, r.URL)
	}
	return urls
}

func waitLines(t *testing.T, path string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		urls := eventURLs(t, path)
		if len(urls) >= n || time.Now().After(deadline) {
			return urls
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// serve captures on a veth into its event log; the log is renamed and
// SIGHUP sent: later events go to a new file at the old path, none lost.
func TestServeEventsSIGHUP(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")
	tmp := t.TempDir()
	dir, events := filepath.Join(tmp, "state"), filepath.Join(tmp, "events.jsonl")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	cmd, sock := serveIn(t, []string{"ip", "netns", "exec", srv}, dir, "--iface", srvIf, "--bpf", "tcp port 8080", "--events", events)
	nettest.WaitListen(t, srv, 8080)
	fetch := func(from, to int) {
		var cfg strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&cfg, "url = \"http://192.0.2.1:8080/hup/%d\"\n", i)
		}
		p := filepath.Join(tmp, fmt.Sprintf("curl-%d.cfg", from))
		os.WriteFile(p, []byte(cfg.String()), 0o644)
		if out, err := nettest.Command(cli, "curl", "-s", "--max-time", "30", "-o", "/dev/null", "-K", p).CombinedOutput(); err != nil {
			t.Fatalf("curl: %v %s", err, out)
		}
	}
	fetch(0, 200)
	if got := waitLines(t, events, 200); len(got) != 200 {
		t.Fatalf("before SIGHUP: %d events", len(got))
	}
	if err := os.Rename(events, events+".1"); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	time.Sleep(300 * time.Millisecond)
	fetch(200, 400)
	after := waitLines(t, events, 200)
	before := eventURLs(t, events+".1")
	if len(before) != 200 || len(after) != 200 {
		t.Fatalf("rotated file %d events, new file %d; want 200 and 200", len(before), len(after))
	}
	for i, u := range after {
		if want := fmt.Sprintf("http://192.0.2.1:8080/hup/%d", 200+i); u != want {
			t.Fatalf("new file event %d: %s, want %s", i, u, want)
		}
	}

	// The interface goes away: the source is down, the API still serves.
	c := unixClient(sock)
	up := func() string {
		resp, err := c.Get("http://urldedupd/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "urldedupd_source_up{") {
				return l
			}
		}
		return ""
	}
	if l := up(); !strings.HasSuffix(l, " 1") {
		t.Fatalf("source before: %q", l)
	}
	if out, err := exec.Command("ip", "-n", srv, "link", "del", srvIf).CombinedOutput(); err != nil {
		t.Fatalf("ip link del: %v %s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.HasSuffix(up(), " 0") {
		if time.Now().After(deadline) {
			t.Fatalf("source still up after its interface was deleted: %q", up())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body := post(t, c, "/v1/check", "http://after-failure.example/\n"); code != 200 || body != "new\n" {
		t.Fatalf("API after the source failed: %d %q", code, body)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve exit: %v", err)
	}
}

// serve started as root drops to --user after opening its sockets, and
// capture and the state keep working.
func TestServeDropsPrivileges(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")
	tmp := t.TempDir()
	os.Chmod(tmp, 0o755)
	dir, events := filepath.Join(tmp, "state"), filepath.Join(tmp, "events.jsonl")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	cmd, sock := serveIn(t, []string{"ip", "netns", "exec", srv}, dir, "--iface", srvIf, "--events", events, "--user", "nobody")
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		if strings.Contains(string(status), "\nUid:\t65534\t65534\t65534\t65534") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve still runs as:\n%s", status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	nettest.WaitListen(t, srv, 8080)
	if out, err := nettest.Command(cli, "curl", "-s", "-o", "/dev/null", "--max-time", "10",
		"http://192.0.2.1:8080/as-nobody").CombinedOutput(); err != nil {
		t.Fatalf("curl: %v %s", err, out)
	}
	if got := waitLines(t, events, 1); len(got) != 1 || got[0] != "http://192.0.2.1:8080/as-nobody" {
		t.Fatalf("events after dropping privileges: %q", got)
	}
	if code, body := post(t, unixClient(sock), "/v1/check", "http://192.0.2.1:8080/as-nobody\n"); code != 200 || body != "dup\n" {
		t.Fatalf("API as nobody: %d %q", code, body)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve exit: %v", err)
	}
}

// serve --events-format ecs writes its event log as ECS documents: curl's
// requests over a veth each once, with their User-Agent and the flow's
// community_id; a format not known is a usage error. Two workers share the
// interface (fanout) and their metrics are the interface's, added up.
func TestServeEventsECS(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")
	tmp := t.TempDir()
	dir, events := filepath.Join(tmp, "state"), filepath.Join(tmp, "events.jsonl")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	if _, stderr, code := run(t, nil, "--dir", dir, "serve", "--events-format", "xml"); code != 2 || !strings.Contains(stderr, "--events-format") {
		t.Fatalf("--events-format xml: exit %d, %q", code, stderr)
	}
	cmd, sock := serveIn(t, []string{"ip", "netns", "exec", srv}, dir, "--iface", srvIf, "--bpf", "tcp port 8080", "--events", events, "--events-format", "ecs", "--workers", "2")
	nettest.WaitListen(t, srv, 8080)
	const n = 20
	var cfg strings.Builder
	for i := range n {
		fmt.Fprintf(&cfg, "url = \"http://192.0.2.1:8080/ecs/%d\"\n", i)
	}
	p := filepath.Join(tmp, "curl.cfg")
	os.WriteFile(p, []byte(cfg.String()), 0o644)
	if out, err := nettest.Command(cli, "curl", "-s", "--max-time", "30", "-A", "urldedupd-test/1.0", "-o", "/dev/null", "-K", p).CombinedOutput(); err != nil {
		t.Fatalf("curl: %v %s", err, out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(events); strings.Count(string(b), "\n") >= n {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The two workers' figures are one source's: every request once.
	want := fmt.Sprintf(`urldedupd_capture_records_total{proto="http",source="%s"} %d`, srvIf, n)
	var metricsText string
	for range 50 {
		resp, err := unixClient(sock).Get("http://urldedupd/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if metricsText = string(b); strings.Contains(metricsText, want) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(metricsText, want) || strings.Count(metricsText, `urldedupd_source_up{source="`+srvIf+`"} 1`) != 1 {
		t.Errorf("metrics lack %q or one source_up line:\n%s", want, metricsText)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	b, _ := os.ReadFile(events)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != n {
		t.Fatalf("%d documents, want %d: %s", len(lines), n, b)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var d struct {
			URL       struct{ Full string }
			UserAgent struct{ Original string } `json:"user_agent"`
			Network   struct {
				CommunityID string `json:"community_id"`
			}
			Event     struct{ Action string }
			Urldedupd struct{ New bool }
		}
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if d.UserAgent.Original != "urldedupd-test/1.0" || !strings.HasPrefix(d.Network.CommunityID, "1:") || d.Event.Action != "url-new" || !d.Urldedupd.New || seen[d.URL.Full] {
			t.Errorf("document %s", l)
		}
		seen[d.URL.Full] = true
	}
}
