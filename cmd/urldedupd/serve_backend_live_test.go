package main_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// serve --iface on Redis (both in the server's namespace): Redis is killed
// while requests are captured; the requests it cannot decide are counted,
// the source stays up, and once Redis is back, later requests are decided
// and logged. SIGTERM exits 0.
func TestServeRedisDownCaptureGoesOn(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")
	tmp := t.TempDir()
	var redis *exec.Cmd
	startRedis := func() {
		redis = nettest.Command(srv, "redis-server", "--bind", "127.0.0.1", "--port", "6379",
			"--dir", tmp, "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--protected-mode", "no")
		if err := redis.Start(); err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			out, _ := nettest.Command(srv, "redis-cli", "-p", "6379", "ping").Output()
			if strings.TrimSpace(string(out)) == "PONG" {
				return
			}
			if i == 100 {
				t.Fatal("redis-server did not start")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	stopRedis := func() {
		if redis != nil {
			syscall.Kill(redis.Process.Pid, syscall.SIGKILL)
			redis.Wait()
			redis = nil
		}
	}
	startRedis()
	t.Cleanup(stopRedis)

	events, sock := filepath.Join(tmp, "events.jsonl"), filepath.Join(tmp, "api.sock")
	var stderr lockedBuffer
	cmd, _ := serveLogging(t, &stderr, []string{"ip", "netns", "exec", srv}, tmp,
		"--backend", "redis://127.0.0.1:6379/0", "--redis-timeout", "1s", "--socket", sock,
		"--iface", srvIf, "--bpf", "tcp port 8080", "--events", events)
	c := unixClient(sock)
	up := `urldedupd_source_up{source="` + srvIf + `"}`
	nettest.WaitListen(t, srv, 8080)
	fetchPaths(t, cli, "a", 0, 5)
	if got := waitLines(t, events, 5); len(got) != 5 {
		t.Fatalf("with Redis up: %d events", len(got))
	}

	stopRedis()
	fetchPaths(t, cli, "b", 0, 5)
	deadline := time.Now().Add(20 * time.Second)
	for metric(t, c, `urldedupd_capture_undecided_total{source="`+srvIf+`"}`) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no request counted undecided with Redis down\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitLog(t, &stderr, "capture: requests could not be decided")
	if v := metric(t, c, up); v != 1 {
		t.Fatalf("source_up = %v with Redis down\n%s", v, stderr.String())
	}

	startRedis()
	fetchPaths(t, cli, "c", 0, 5)
	deadline = time.Now().Add(20 * time.Second)
	for {
		got := eventURLs(t, events)
		if !slices.ContainsFunc(paths("c", 0, 5), func(u string) bool { return !slices.Contains(got, u) }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after Redis came back: events %q\n%s", got, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v := metric(t, c, up); v != 1 {
		t.Fatalf("source_up = %v after Redis came back", v)
	}
	t.Logf("undecided while Redis was down: %v", metric(t, c, fmt.Sprintf("urldedupd_capture_undecided_total{source=%q}", srvIf)))
	stopServe(t, cmd)
}
