package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// Real VXLAN: two VXLAN links over the veth between the namespaces (port
// 4789, and 9999, which is no default), curl fetches 10 URLs through each,
// tcpdump records the underlay. replay finds the 10 requests on 4789 with
// "encap":"vxlan/ethernet", and those on 9999 too, by content (or with
// --udp-tunnel vxlan:9999), none with --udp-tunnel none (the datagrams
// then are other frames, exit 0); tshark finds the same (told of 9999
// with -d).
func TestReplayVXLAN(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	cliIf := srvIf[:len(srvIf)-1] + "b"
	ipn := func(args ...string) {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", args, err, out)
		}
	}
	for i, port := range []string{"4789", "9999"} {
		for _, side := range []struct{ ns, dev, local, remote, addr string }{
			{srv, srvIf, "192.0.2.1", "192.0.2.2", fmt.Sprintf("10.99.%d.1/24", i)},
			{cli, cliIf, "192.0.2.2", "192.0.2.1", fmt.Sprintf("10.99.%d.2/24", i)},
		} {
			vx := fmt.Sprintf("vx%d", i)
			ipn("-n", side.ns, "link", "add", vx, "type", "vxlan", "id", fmt.Sprint(42+i), "dstport", port,
				"local", side.local, "remote", side.remote, "dev", side.dev)
			ipn("-n", side.ns, "addr", "add", side.addr, "dev", vx)
			ipn("-n", side.ns, "link", "set", vx, "up")
		}
	}
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "0.0.0.0", "8080")
	nettest.WaitListen(t, srv, 8080)
	tmp := t.TempDir()
	pcap := filepath.Join(tmp, "underlay.pcap")
	dump := nettest.Command(srv, "tcpdump", "-i", srvIf, "--immediate-mode", "-U", "-w", pcap, "udp")
	dumpErr := &lockedBuffer{}
	dump.Stderr = dumpErr
	background(t, dump)
	for i := 0; !strings.Contains(dumpErr.String(), "listening on"); i++ {
		if i == 100 {
			t.Fatalf("tcpdump: %s", dumpErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	var cfg strings.Builder
	for i := range 10 {
		fmt.Fprintf(&cfg, "url = \"http://10.99.0.1:8080/vx4789/%d\"\nurl = \"http://10.99.1.1:8080/vx9999/%d\"\n", i, i)
	}
	cfgPath := filepath.Join(tmp, "curl.cfg")
	os.WriteFile(cfgPath, []byte(cfg.String()), 0o644)
	if out, err := nettest.Command(cli, "curl", "-s", "--max-time", "30", "-o", "/dev/null", "-K", cfgPath).CombinedOutput(); err != nil {
		t.Fatalf("curl: %v %s", err, out)
	}
	time.Sleep(200 * time.Millisecond)
	syscall.Kill(dump.Process.Pid, syscall.SIGINT)
	dump.Wait()

	tshark := func(args ...string) int {
		out, err := exec.Command("tshark", append(append([]string{"-r", pcap}, args...), "-Y", "http.request", "-T", "fields", "-e", "http.request.full_uri")...).Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		return len(strings.Fields(string(out)))
	}
	if n, all := tshark(), tshark("-d", "udp.port==9999,vxlan"); n != 10 || all != 20 {
		out, _ := exec.Command("tshark", "-r", pcap).CombinedOutput()
		fi, _ := os.Stat(pcap)
		t.Logf("%s\n%s\nsize %d", out, dumpErr.String(), fi.Size())
		t.Fatalf("tshark finds %d requests, %d with 9999 as VXLAN; want 10 and 20", n, all)
	}
	replay := func(args ...string) (records []map[string]any, sum map[string]uint64) {
		out, stderr, code := run(t, nil, append([]string{"--dir", filepath.Join(t.TempDir(), "state"), "replay", "--json"}, append(args, pcap)...)...)
		if code != 0 {
			t.Fatalf("replay %v: exit %d: %s", args, code, stderr)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l == "" {
				continue
			}
			var r map[string]any
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			records = append(records, r)
		}
		sum, err := flatSummary(strings.SplitN(stderr, "\n", 2)[0])
		if err != nil {
			t.Fatalf("replay %v: summary: %v", args, err)
		}
		return records, sum
	}
	check := func(args []string, want int) {
		recs, sum := replay(args...)
		if len(recs) != want {
			t.Fatalf("replay %v: %d records, want %d; summary %v", args, len(recs), want, sum)
		}
		for _, r := range recs {
			if r["encap"] != "vxlan/ethernet" || !strings.Contains(r["url"].(string), "/vx") {
				t.Fatalf("replay %v: record %v", args, r)
			}
		}
	}
	check(nil, 20)
	check([]string{"--udp-tunnel", "vxlan:4789", "--udp-tunnel", "vxlan:9999"}, 20)
	check([]string{"--udp-tunnel", "gtp:2152"}, 20) // no VXLAN port: both by content
	recs, sum := replay("--udp-tunnel", "none")
	if len(recs) != 0 || sum["other:ipproto:17"] < 40 || sum["undecoded_frames"] != 0 {
		t.Fatalf("replay --udp-tunnel none: %d records, summary %v", len(recs), sum)
	}
}
