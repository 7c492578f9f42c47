package main_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// serve --iface on one end of a veth; from the other end, crafted frames
// injected with a raw AF_PACKET socket (scripts/inject.py): TCP segment
// pairs 2^31 and 2^32-1 apart (from the first segment and from the byte
// after it) at and around the wrap points, then 600 seeded random
// frames (garbage, IPv4 and TCP headers cut short or inconsistent, random
// segments). serve stays up, its API answers, its source is still up, and a
// normal request sent afterwards is in the event log.
func TestServeSurvivesHostileFrames(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	cliIf := strings.TrimSuffix(srvIf, "a") + "b"
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")
	tmp := t.TempDir()
	dir, events := filepath.Join(tmp, "state"), filepath.Join(tmp, "events.jsonl")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	var stderr lockedBuffer
	cmd, sock := serveLogging(t, &stderr, []string{"ip", "netns", "exec", srv}, dir, "--iface", srvIf, "--events", events)
	c := unixClient(sock)
	nettest.WaitListen(t, srv, 8080)

	mac := macOf(t, srv, srvIf)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	inject := exec.CommandContext(ctx, "ip", "netns", "exec", cli, "python3", "../../scripts/inject.py",
		cliIf, mac, "192.0.2.2", "192.0.2.1", "8080", "9", "600")
	sent, err := inject.CombinedOutput()
	if err != nil || strings.TrimSpace(string(sent)) != "648" {
		t.Fatalf("inject: %v %s", err, sent)
	}
	// Every frame was read (the kernel's own ARP and RST frames count
	// too), or serve died trying.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := readMetric(c, `urldedupd_capture_packets_total{source="`+srvIf+`"}`)
		if err != nil || !alive(cmd.Process.Pid) {
			time.Sleep(200 * time.Millisecond) // for its last words
			t.Fatalf("serve died (%v):\n%s", err, stderr.String())
		}
		if n >= 648 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not read the 648 frames:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp, err := c.Get("http://urldedupd/healthz")
	if err != nil {
		t.Fatalf("healthz after the frames: %v\n%s", err, stderr.String())
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz after the frames: %d", resp.StatusCode)
	}
	if code, body := post(t, c, "/v1/check", "http://after-hostile.example/\n"); code != 200 || body != "new\n" {
		t.Fatalf("POST /v1/check after the frames: %d %q", code, body)
	}
	if v := metric(t, c, `urldedupd_source_up{source="`+srvIf+`"}`); v != 1 {
		t.Fatalf("source_up = %v after the frames\n%s", v, stderr.String())
	}

	const after = "http://192.0.2.1:8080/after-hostile"
	if out, err := nettest.Command(cli, "curl", "-s", "-o", "/dev/null", "--max-time", "10", after).CombinedOutput(); err != nil {
		t.Fatalf("curl: %v %s", err, out)
	}
	deadline = time.Now().Add(10 * time.Second)
	for !slices.Contains(eventURLs(t, events), after) {
		if time.Now().After(deadline) {
			t.Fatalf("%s is not in the event log: %q", after, eventURLs(t, events))
		}
		time.Sleep(100 * time.Millisecond)
	}
	stopServe(t, cmd)
}

// alive tells whether a child process runs (exists and is not a zombie).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := bytes.Cut(stat, []byte(") "))
	return len(rest) > 0 && rest[0] != 'Z'
}
