package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// capture --workers 2: two sockets in one AF_PACKET fanout group (flow
// hash, defragmentation), an engine each, one state. A client sends 2,000
// requests, each on a connection of its own (HTTP/1.0), and 10
// requests with 3 KB headers that a router fragments (fragmentingRoute).
// Every URL is logged exactly once: none lost, none twice, counted
// apart; the fragmented ones too (the kernel's defragmentation hands a
// datagram's fragments to one worker whole, or the worker's own
// reassembly does).
func TestCaptureFanout(t *testing.T) {
	t.Parallel()
	cli, srv, srvIf := fragmentingRoute(t)
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "203.0.113.2", "8080")
	nettest.WaitListen(t, srv, 8080)
	tmp := t.TempDir()
	pcap := filepath.Join(tmp, "server.pcap")
	stopDump := tcpdump(t, srv, srvIf, "ip", pcap)
	capt := startCapture(t, srv, srvIf, filepath.Join(tmp, "state"), "--workers", "2")

	const conns, frags = 2000, 10
	want := map[string]bool{}
	curl := func(name, header string, urls []string, args ...string) {
		t.Helper()
		var cfg strings.Builder
		fmt.Fprintf(&cfg, "header = \"%s\"\n", header)
		for _, u := range urls {
			fmt.Fprintf(&cfg, "url = \"%s\"\noutput = \"/dev/null\"\n", u)
			want[u] = true
		}
		p := filepath.Join(tmp, name)
		os.WriteFile(p, []byte(cfg.String()), 0o644)
		if out, err := nettest.Command(cli, append([]string{"curl", "-s", "--max-time", "120", "-K", p}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("curl: %v %s", err, out)
		}
	}
	var urls []string
	for i := range conns {
		urls = append(urls, fmt.Sprintf("http://203.0.113.2:8080/fanout/%d", i))
	}
	curl("conns.cfg", "X-Test: fanout", urls, "--http1.0") // HTTP/1.0: a connection a request
	urls = urls[:0]
	for i := range frags {
		urls = append(urls, fmt.Sprintf("http://203.0.113.2:8080/fanout-frag/%d", i))
	}
	curl("frags.cfg", "X-Pad: "+strings.Repeat("f", 3000), urls)
	capt.waitLines(conns + frags)
	summary := capt.stop(t)
	if n := fragmentsOnWire(t, pcap, 2*frags, stopDump); n < 2*frags {
		t.Fatalf("only %d IP fragments on the server's link; the test made no fragmented traffic", n)
	}
	if !strings.Contains(capt.started, "with 2 workers") {
		t.Fatalf("capture said %q, not that it has 2 workers", capt.started)
	}

	seen := map[string]int{}
	for _, l := range capt.lines() {
		seen[l]++
	}
	lost, twice, other := 0, 0, 0
	for u := range want {
		switch seen[u] {
		case 0:
			lost++
		case 1:
		default:
			twice++
		}
	}
	for u := range seen {
		if !want[u] {
			other++
		}
	}
	if lost != 0 || twice != 0 || other != 0 {
		t.Fatalf("%d URLs lost, %d logged more than once, %d not sent\nsummary:\n%s", lost, twice, other, summary)
	}
	// Every request on the wire is decided once, by one worker: the
	// server says "Connection: close" to each HTTP/1.0 request, so curl
	// sends each once, on its own connection.
	n := conns + frags
	m := regexp.MustCompile(`IP datagrams reassembled (\d+)`).FindStringSubmatch(summary)
	if !strings.Contains(summary, fmt.Sprintf("requests %d  new %d  dup 0", n, n)) || !strings.Contains(summary, fmt.Sprintf("tcp flows %d", conns+1)) {
		t.Fatalf("%d URLs; summary:\n%s", n, summary)
	}
	if m != nil {
		r, _ := strconv.Atoi(m[1])
		t.Logf("%d datagrams reassembled by the workers (the kernel's defragmentation takes the rest)", r)
	}
	t.Logf("summary:\n%s", summary)
}
