package main_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// netns makes two network namespaces joined by a veth pair: a server at
// 192.0.2.1 and a client at 192.0.2.2 (TEST-NET-1, inside the namespaces
// only). It returns the namespaces and the server's interface.
func netns(t *testing.T) (srv, cli, srvIf string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	id := fmt.Sprintf("udt%d", os.Getpid()%100000)
	srv, cli, srvIf = id+"s", id+"c", id+"a"
	sh := func(args ...string) {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", args, err, out)
		}
	}
	t.Cleanup(func() {
		exec.Command("ip", "netns", "del", srv).Run()
		exec.Command("ip", "netns", "del", cli).Run()
	})
	sh("netns", "add", srv)
	sh("netns", "add", cli)
	sh("link", "add", srvIf, "type", "veth", "peer", "name", id+"b")
	sh("link", "set", srvIf, "netns", srv)
	sh("link", "set", id+"b", "netns", cli)
	sh("-n", srv, "addr", "add", "192.0.2.1/24", "dev", srvIf)
	sh("-n", cli, "addr", "add", "192.0.2.2/24", "dev", id+"b")
	for _, ns := range []string{srv, cli} {
		sh("-n", ns, "link", "set", "lo", "up")
	}
	sh("-n", srv, "link", "set", srvIf, "up")
	sh("-n", cli, "link", "set", id+"b", "up")
	return srv, cli, srvIf
}

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
	srv, cli, srvIf := netns(t)
	background(t, exec.Command("ip", "netns", "exec", srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080"))

	state := filepath.Join(t.TempDir(), "state")
	if out, err := exec.Command(binary, "--dir", state, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	capt := exec.Command("ip", "netns", "exec", srv, binary, "--dir", state, "capture", "--iface", srvIf, "--bpf", "tcp port 8080")
	stdout, _ := capt.StdoutPipe()
	stderr, _ := capt.StderrPipe()
	background(t, capt)
	var mu sync.Mutex
	var lines []string
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
		}
	}()
	errLines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			errLines <- sc.Text()
		}
		close(errLines)
	}()
	select {
	case l := <-errLines:
		if !strings.Contains(l, "capturing on "+srvIf) {
			t.Fatalf("capture said %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("capture did not start")
	}
	waitListen(t, srv, 8080)

	var cfg strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&cfg, "url = \"http://192.0.2.1:8080/item/%d?live=1\"\n", i)
	}
	cfgPath := filepath.Join(t.TempDir(), "curl.cfg")
	os.WriteFile(cfgPath, []byte(cfg.String()), 0o644)
	for pass := range 2 {
		curl := exec.Command("ip", "netns", "exec", cli, "curl", "-s", "--max-time", "60", "-K", cfgPath)
		curl.Stdout = nil // bodies discarded
		if out, err := curl.CombinedOutput(); err != nil {
			t.Fatalf("curl pass %d: %v %s", pass, err, out[:min(len(out), 300)])
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(lines)
		mu.Unlock()
		if n >= 1000 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)             // any late duplicates would show now
	syscall.Kill(capt.Process.Pid, syscall.SIGINT) // ip netns exec passes it on
	var summary string
	for l := range errLines {
		summary += l + "\n"
	}
	if err := capt.Wait(); err != nil {
		t.Fatalf("capture exit: %v\n%s", err, summary)
	}
	mu.Lock()
	defer mu.Unlock()
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

// waitListen waits, bounded, until something listens on TCP port in the
// network namespace ns.
func waitListen(t *testing.T, ns string, port int) {
	t.Helper()
	for i := 0; ; i++ {
		out, _ := exec.Command("ip", "netns", "exec", ns, "ss", "-ltnH", fmt.Sprintf("sport = :%d", port)).Output()
		if strings.Contains(string(out), "LISTEN") {
			return
		}
		if i == 100 {
			t.Fatalf("nothing listens on port %d in %s", port, ns)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
