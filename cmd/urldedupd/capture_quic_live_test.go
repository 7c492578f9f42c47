package main_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// Live QUIC: capture on the server's end of a veth while quic-go clients
// (scripts/quicprobe) connect twice to each of two hosts, a.example on
// port 443 in QUIC v1 and b.example on 8443 in QUIC v2, each connection
// from a new socket: each host is reported new once and its repeat dup,
// tshark finds the same names in a tcpdump of the same traffic, and the
// summary reads the kernel's drops.
func TestCaptureQUICLive(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	probe := filepath.Join(t.TempDir(), "quicprobe")
	if out, err := exec.Command("go", "build", "-o", probe, "../../scripts/quicprobe").CombinedOutput(); err != nil {
		t.Fatalf("build quicprobe: %v %s", err, out)
	}
	for _, a := range []string{"192.0.2.1:443", "192.0.2.1:8443"} {
		nettest.Start(t, srv, probe, "serve", "-listen", a)
	}
	state := filepath.Join(t.TempDir(), "state")
	if out, err := exec.Command(binary, "--dir", state, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	pcap := filepath.Join(t.TempDir(), "quic.pcap")
	stopDump := tcpdump(t, srv, srvIf, "udp", pcap)
	capt := startCapture(t, srv, srvIf, state, "--bpf", "udp", "--all")

	want := []string{"new\thttps://a.example/", "new\thttps://b.example:8443/", "dup\thttps://a.example/", "dup\thttps://b.example:8443/"}
	for round := range 2 {
		for _, c := range []struct{ addr, version, name string }{{"192.0.2.1:443", "1", "a.example"}, {"192.0.2.1:8443", "2", "b.example"}} {
			// The servers may still be starting: a few tries, bounded.
			var out []byte
			var err error
			for try := 0; try < 5; try++ {
				dial := nettest.Command(cli, probe, "dial", "-addr", c.addr, "-version", c.version, c.name)
				if out, err = dial.CombinedOutput(); err == nil {
					break
				}
				time.Sleep(time.Second)
			}
			if err != nil {
				t.Fatalf("round %d, %s: %v %s", round, c.name, err, out)
			}
		}
	}
	capt.waitLines(len(want)) // and a while more: a record too many would show
	summary := capt.stop(t)
	got := strings.Join(capt.lines(), "\n")
	// A failed dial is tried again: a connection whose handshake failed
	// may have shown a ClientHello that was reported; none did here if
	// the records are exactly these.
	if got != strings.Join(want, "\n") {
		t.Fatalf("records:\n%s\nwant:\n%s\nsummary:\n%s", got, strings.Join(want, "\n"), summary)
	}
	if !strings.Contains(summary, "quic 4") || !strings.Contains(summary, "failed authentication 0") || !strings.Contains(summary, "kernel drops") {
		t.Fatalf("summary:\n%s", summary)
	}
	stopDump()
	out, err := exec.Command("tshark", "-n", "-r", pcap, "-d", "udp.port==8443,quic", "-Y", "quic && tls.handshake.type==1",
		"-T", "fields", "-e", "tls.handshake.extensions_server_name").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if names := strings.Join(strings.Fields(string(out)), " "); names != "a.example b.example a.example b.example" {
		t.Errorf("tshark finds %q in the same traffic", names)
	}
	t.Logf("summary: %s", strings.TrimSpace(summary))
}
