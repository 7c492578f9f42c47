package main_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// background starts a command and kills it, by pid, when the test ends.
func background(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
}

// Live: capture on the server's end of a veth while curl fetches 1,000
// distinct URLs and then the same 1,000 again: exactly the 1,000 are new,
// every repeat is a duplicate, and the kernel's drop count is reported.
func TestCaptureLive(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")

	state := filepath.Join(t.TempDir(), "state")
	if out, err := exec.Command(binary, "--dir", state, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	capt := startCapture(t, srv, srvIf, state, "tcp", "port", "8080") // the filter as tcpdump takes it
	nettest.WaitListen(t, srv, 8080)

	var cfg strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&cfg, "url = \"http://192.0.2.1:8080/item/%d?live=1\"\n", i)
	}
	cfgPath := filepath.Join(t.TempDir(), "curl.cfg")
	os.WriteFile(cfgPath, []byte(cfg.String()), 0o644)
	for pass := range 2 {
		curl := nettest.Command(cli, "curl", "-s", "--max-time", "60", "-K", cfgPath)
		curl.Stdout = nil // bodies discarded
		if out, err := curl.CombinedOutput(); err != nil {
			t.Fatalf("curl pass %d: %v %s", pass, err, out[:min(len(out), 300)])
		}
	}
	capt.waitLines(1000)
	summary := capt.stop(t)
	lines := capt.lines()
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Fatalf("%q reported new twice", l)
		}
		seen[l] = true
	}
	if len(seen) != 1000 {
		t.Fatalf("%d URLs reported new, want 1000\n%s", len(seen), summary)
	}
	for i := range 1000 {
		if u := fmt.Sprintf("http://192.0.2.1:8080/item/%d?live=1", i); !seen[u] {
			t.Fatalf("%s not reported", u)
		}
	}
	if !strings.Contains(summary, "requests 2000  new 1000  dup 1000") ||
		!regexp.MustCompile(`kernel drops \d+`).MatchString(summary) {
		t.Fatalf("summary:\n%s", summary)
	}
	t.Logf("summary: %s", strings.TrimSpace(summary))
}

// capture -c 5 stops by itself once 5 records are written, while requests
// go on: exit 0, its summary, and those 5 records, the first 5.
func TestCaptureCount(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")
	state := filepath.Join(t.TempDir(), "state")
	if out, err := exec.Command(binary, "--dir", state, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	capt := startCapture(t, srv, srvIf, state, "-c", "5", "tcp", "port", "8080")
	nettest.WaitListen(t, srv, 8080)
	fetchPaths(t, cli, "count", 0, 20)
	var summary string
	timeout := time.After(30 * time.Second)
	for open := true; open; {
		select {
		case l, ok := <-capt.errs:
			summary += l + "\n"
			open = ok
		case <-timeout:
			t.Fatalf("capture -c 5 still running 30 s after 20 requests; it said:\n%s", summary)
		}
	}
	if err := capt.cmd.Wait(); err != nil {
		t.Fatalf("capture -c 5: %v\n%s", err, summary)
	}
	lines := capt.lines()
	if want := paths("count", 0, 5); !slices.Equal(lines, want) || !strings.Contains(summary, "requests 5") {
		t.Fatalf("capture -c 5 wrote %q, want %q; summary:\n%s", lines, want, summary)
	}
}

// liveCapture is `urldedupd capture` running in a namespace: its output
// lines are collected, its stderr read for the start line and the summary.
type liveCapture struct {
	cmd      *exec.Cmd
	mu       sync.Mutex
	out      []string
	errs     chan string
	started  string // what it said first: "capturing on ..."
	creating string // what it said before, creating the state
}

// startCapture runs capture --iface iface with args in ns, its state in
// dir, and waits, bounded, until it says it is capturing (after
// "creating state", if it creates one).
func startCapture(t *testing.T, ns, iface, dir string, args ...string) *liveCapture {
	t.Helper()
	return startCaptureCreating(t, ns, iface, dir, nil, args...)
}

// startCaptureCreating is startCapture calling whileCreating, if the
// capture creates its state, when it says so.
func startCaptureCreating(t *testing.T, ns, iface, dir string, whileCreating func(), args ...string) *liveCapture {
	t.Helper()
	c := &liveCapture{errs: make(chan string, 16)}
	c.cmd = exec.Command("ip", append([]string{"netns", "exec", ns, binary, "--dir", dir, "capture", "--iface", iface}, args...)...)
	stdout, _ := c.cmd.StdoutPipe()
	stderr, _ := c.cmd.StderrPipe()
	background(t, c.cmd)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.mu.Lock()
			c.out = append(c.out, sc.Text())
			c.mu.Unlock()
		}
	}()
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			c.errs <- sc.Text()
		}
		close(c.errs)
	}()
	// Creating a state writes its zeros: seconds on a loaded machine.
	timeout := time.After(60 * time.Second)
	for c.started == "" {
		select {
		case l := <-c.errs:
			switch {
			case strings.HasPrefix(l, "urldedupd: creating state ") && c.creating == "":
				c.creating = l
				if whileCreating != nil {
					whileCreating()
				}
			case strings.Contains(l, "capturing on "+iface):
				c.started = l
			default:
				t.Fatalf("capture said %q", l)
			}
		case <-timeout:
			t.Fatal("capture did not start")
		}
	}
	return c
}

// lines returns the output lines so far.
func (c *liveCapture) lines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.out)
}

// waitLines waits, at most 20 s, for n output lines, then 300 ms more for
// any late (duplicate) ones.
func (c *liveCapture) waitLines(n int) {
	for deadline := time.Now().Add(20 * time.Second); len(c.lines()) < n && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
}

// stop ends the capture with SIGINT (ip netns exec passes it on) and
// returns its summary; a failed exit fails the test.
func (c *liveCapture) stop(t *testing.T) (summary string) {
	t.Helper()
	syscall.Kill(c.cmd.Process.Pid, syscall.SIGINT)
	for l := range c.errs {
		summary += l + "\n"
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("capture exit: %v\n%s", err, summary)
	}
	return summary
}

// macOf returns the MAC address of iface in ns.
func macOf(t *testing.T, ns, iface string) string {
	t.Helper()
	out, err := exec.Command("ip", "-n", ns, "link", "show", iface).Output()
	mac := regexp.MustCompile(`link/ether ([0-9a-f:]{17})`).FindSubmatch(out)
	if err != nil || mac == nil {
		t.Fatalf("the MAC address of %s: %v %s", iface, err, out)
	}
	return string(mac[1])
}
