package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// Live fragments: a client, a router and a server in three namespaces. The
// router's link to the server has an MTU of 576; the server advertises an
// MSS of 1460 (advmss on its route) and the client sends without DF
// (net.ipv4.ip_no_pmtu_disc=1), so the router fragments every full TCP
// segment. curl sends 10 requests with 3 KB headers. tcpdump on the
// server's interface confirms that fragments went by, and capture --iface
// on that interface (one worker: TestCaptureFanout has two) reports each
// request exactly once, with the datagrams reassembled in its summary.
func TestCaptureLiveFragments(t *testing.T) {
	t.Parallel()
	cli, srv, srvIf := fragmentingRoute(t)

	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "203.0.113.2", "8080")
	nettest.WaitListen(t, srv, 8080)
	tmp := t.TempDir()
	pcap := filepath.Join(tmp, "server.pcap")
	stopDump := tcpdump(t, srv, srvIf, "ip", pcap)
	capt := startCapture(t, srv, srvIf, filepath.Join(tmp, "state"), "--workers", "1") // one socket: the engine reassembles (a fanout group's kernel defragmentation would)

	const n = 10
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "header = \"X-Pad: %s\"\n", strings.Repeat("f", 3000))
	for i := range n {
		fmt.Fprintf(&cfg, "url = \"http://203.0.113.2:8080/frag/%d\"\n", i)
	}
	cfgPath := filepath.Join(tmp, "curl.cfg")
	os.WriteFile(cfgPath, []byte(cfg.String()), 0o644)
	if out, err := nettest.Command(cli, "curl", "-s", "--max-time", "60", "-o", "/dev/null", "-K", cfgPath).CombinedOutput(); err != nil {
		t.Fatalf("curl: %v %s", err, out)
	}
	capt.waitLines(n)
	summary := capt.stop(t)
	frags := fragmentsOnWire(t, pcap, 2*n, stopDump)
	if frags < 2*n {
		t.Fatalf("only %d IP fragments on the server's link; the test made no fragmented traffic", frags)
	}
	lines := capt.lines()
	want := map[string]bool{}
	for i := range n {
		want[fmt.Sprintf("http://203.0.113.2:8080/frag/%d", i)] = true
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if !want[l] || seen[l] {
			t.Fatalf("unexpected or repeated %q in %q", l, lines)
		}
		seen[l] = true
	}
	m := regexp.MustCompile(`IP datagrams reassembled (\d+)  dropped incomplete after the timeout 0  dropped at the cap 0  dropped invalid 0`).FindStringSubmatch(summary)
	if len(seen) != n || !strings.Contains(summary, fmt.Sprintf("requests %d  new %d  dup 0", n, n)) || m == nil {
		t.Fatalf("%d of %d URLs reported\nsummary:\n%s", len(seen), n, summary)
	}
	if r, _ := strconv.Atoi(m[1]); r < n {
		t.Fatalf("%d datagrams reassembled for %d requests of 3 KB\n%s", r, n, summary)
	}
	t.Logf("%d fragments on the wire; summary:\n%s", frags, summary)
}

// fragmentingRoute makes a client, a router and a server in three
// namespaces: the router's link to the server has an MTU of 576, the
// server advertises an MSS of 1460 (advmss on its route) and the client
// sends without DF (net.ipv4.ip_no_pmtu_disc=1), so the router fragments
// every full TCP segment. The client is 198.51.100.2, the server
// 203.0.113.2 on srvIf.
func fragmentingRoute(t *testing.T) (cli, srv, srvIf string) {
	t.Helper()
	cli, rtr, srv := nettest.Namespace(t), nettest.Namespace(t), nettest.Namespace(t)
	cliIf, rtrCli := nettest.Link(t, cli, rtr, 0)
	rtrSrv, srvIf := nettest.Link(t, rtr, srv, 576)
	nettest.Addr(t, cli, cliIf, "198.51.100.2/24")
	nettest.Addr(t, rtr, rtrCli, "198.51.100.1/24")
	nettest.Addr(t, rtr, rtrSrv, "203.0.113.1/24")
	nettest.Addr(t, srv, srvIf, "203.0.113.2/24")
	sh := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
	}
	sh("ip", "-n", cli, "route", "add", "default", "via", "198.51.100.1")
	sh("ip", "-n", srv, "route", "add", "default", "via", "203.0.113.1", "advmss", "1460")
	sh("ip", "netns", "exec", rtr, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	sh("ip", "netns", "exec", cli, "sysctl", "-qw", "net.ipv4.ip_no_pmtu_disc=1")
	return cli, srv, srvIf
}

// fragmentsOnWire counts the IP fragments (the MF bit or an offset set)
// in pcap, which a tcpdump stopped by stop writes (-U: packet by packet).
// On a loaded machine tcpdump can lag behind the wire, and what it has not
// read when it is stopped is not in its file (35 and 18 of the 60 the
// capture saw, under stress-ng): it is given time to write want
// fragments, 10 s at most, before it is stopped.
func fragmentsOnWire(t *testing.T, pcap string, want int, stop func()) int {
	t.Helper()
	count := func() (int, error) {
		out, err := exec.Command("tcpdump", "-nr", pcap, "ip[6:2] & 0x3fff != 0").Output()
		return strings.Count(string(out), "\n"), err
	}
	for i := 0; i < 100; i++ {
		if n, _ := count(); n >= want { // a record being written may end the file: not yet
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	n, err := count()
	if err != nil {
		t.Fatalf("tcpdump -r: %v", err)
	}
	return n
}
