package main_test

import (
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

// NFLOG: an nftables "log group 5" rule on the client's output to port
// 8080, tcpdump -i nflog:5 recording what it logs, curl fetching 10 URLs:
// replay of the NFLOG capture finds the 10 requests tshark finds.
func TestReplayNFLOG(t *testing.T) {
	t.Parallel()
	srv, cli, _ := nettest.Veth(t)
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")
	nettest.WaitListen(t, srv, 8080)
	for _, rule := range [][]string{
		{"add", "table", "inet", "udt"},
		{"add", "chain", "inet", "udt", "out", "{ type filter hook output priority 0; }"},
		{"add", "rule", "inet", "udt", "out", "tcp", "dport", "8080", "counter", "log", "group", "5"},
	} {
		if out, err := exec.Command("ip", append([]string{"netns", "exec", cli, "nft"}, rule...)...).CombinedOutput(); err != nil {
			t.Fatalf("nft %v: %v %s", rule, err, out)
		}
	}
	tmp := t.TempDir()
	pcap := filepath.Join(tmp, "nflog.pcap")
	// tcpdump ends by itself (timeout), after the traffic: bounded.
	dump := nettest.Command(cli, "timeout", "6", "tcpdump", "-n", "-i", "nflog:5", "--immediate-mode", "-U", "-w", pcap)
	dumpErr := &lockedBuffer{}
	dump.Stderr = dumpErr
	background(t, dump)
	for i := 0; !strings.Contains(dumpErr.String(), "listening on"); i++ {
		if i == 100 {
			t.Fatalf("tcpdump: %s", dumpErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	var cfg strings.Builder
	var want []string
	for i := range 10 {
		u := fmt.Sprintf("http://192.0.2.1:8080/nflog/%d", i)
		fmt.Fprintf(&cfg, "url = %q\n", u)
		want = append(want, u)
	}
	cfgPath := filepath.Join(tmp, "curl.cfg")
	os.WriteFile(cfgPath, []byte(cfg.String()), 0o644)
	if out, err := nettest.Command(cli, "curl", "-s", "--max-time", "30", "-o", "/dev/null", "-K", cfgPath).CombinedOutput(); err != nil {
		t.Fatalf("curl: %v %s", err, out)
	}
	time.Sleep(200 * time.Millisecond)
	dump.Wait()
	out, err := exec.Command("tshark", "-r", pcap, "-Y", "http.request", "-T", "fields", "-e", "http.request.full_uri").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if got := strings.Fields(string(out)); !slices.Equal(got, want) {
		rules, _ := nettest.Command(cli, "nft", "list", "ruleset").CombinedOutput()
		t.Fatalf("tshark finds %q\n%s\n%s", got, dumpErr.String(), rules)
	}
	stdout, stderr, code := run(t, nil, "--dir", filepath.Join(tmp, "state"), "replay", pcap)
	if got := strings.Fields(stdout); code != 0 || !slices.Equal(got, want) || strings.Contains(stderr, "malformed frames") {
		t.Fatalf("replay: exit %d, %q; stderr %s", code, got, stderr)
	}
}
