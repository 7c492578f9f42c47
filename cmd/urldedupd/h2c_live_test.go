package main_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// Live h2c: capture on the server's end of a veth while curl makes
// cleartext HTTP/2 requests to a real h2c server (scripts/h2cserver, Go's
// golang.org/x/net/http2/h2c, built here): with prior knowledge, one URL
// per connection (curl 7.88 fails before a second request on a
// prior-knowledge connection), and with "Upgrade: h2c", several URLs on
// one connection (the first is the HTTP/1.1 upgrade request). Each pass
// runs twice: every URL is reported new once, every repeat is a
// duplicate, the h2c counters and the kernel's drop count are reported.
func TestCaptureLiveH2C(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	dir := t.TempDir()
	server := filepath.Join(dir, "h2cserver")
	if out, err := exec.Command("go", "build", "-o", server, "../../scripts/h2cserver").CombinedOutput(); err != nil {
		t.Fatalf("build h2cserver: %v %s", err, out)
	}
	nettest.Start(t, srv, server, "192.0.2.1:8080")

	state := filepath.Join(dir, "state")
	if out, err := exec.Command(binary, "--dir", state, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	capt := startCapture(t, srv, srvIf, state, "--bpf", "tcp port 8080")
	nettest.WaitListen(t, srv, 8080)

	const base = "http://192.0.2.1:8080"
	curl := func(args ...string) {
		cmd := exec.Command("ip", append([]string{"netns", "exec", cli, "curl", "-s", "-o", "/dev/null", "--max-time", "60"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("curl %v: %v %s", args, err, out)
		}
	}
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("%s/prior/%d?live=h2c", base, i))
	}
	var upgrade []string
	for i := range 5 {
		upgrade = append(upgrade, fmt.Sprintf("%s/upgrade/%d", base, i))
	}
	want = append(want, upgrade...)
	for range 2 {
		for _, u := range want[:10] {
			curl("--http2-prior-knowledge", u)
		}
		curl(append([]string{"--http2"}, upgrade...)...)
	}
	capt.waitLines(len(want)) // and a while more: late duplicates would show
	summary := capt.stop(t)
	lines := capt.lines()
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Fatalf("%q reported new twice", l)
		}
		seen[l] = true
	}
	for _, u := range want {
		if !seen[u] {
			t.Errorf("%s not reported\n%s", u, summary)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%d URLs reported new, want %d: %q", len(seen), len(want), lines)
	}
	// 30 requests: per pass 10 with prior knowledge, 1 HTTP/1.1 upgrade
	// request and 4 HTTP/2 after it; 11 h2c connections a pass, 1 upgraded.
	for _, s := range []string{"requests 30  new 15  dup 15", "http 2", "h2c 28", "h2c connections 22  upgraded 2  given up: framing errors 0  HPACK errors 0"} {
		if !strings.Contains(summary, s) {
			t.Errorf("summary lacks %q:\n%s", s, summary)
		}
	}
	if !regexp.MustCompile(`kernel drops \d+`).MatchString(summary) {
		t.Errorf("summary:\n%s", summary)
	}
	t.Logf("summary: %s", strings.TrimSpace(summary))
}
