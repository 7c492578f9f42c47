package main_test

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TCP Fast Open, made by the kernel: with net.ipv4.tcp_fastopen=3 in both
// namespaces, curl --tcp-fastopen asks for a cookie on its first
// connection and sends its request in the SYN on the next ones. tcpdump
// records them on the veth; replay finds every request, as tshark does,
// and counts one flow per connection.
func TestReplayFastOpen(t *testing.T) {
	srv, cli, srvIf := netns(t)
	for _, ns := range []string{srv, cli} {
		if out, err := exec.Command("ip", "netns", "exec", ns, "sysctl", "-w", "net.ipv4.tcp_fastopen=3").CombinedOutput(); err != nil {
			t.Fatalf("sysctl in %s: %v %s", ns, err, out)
		}
	}
	background(t, exec.Command("ip", "netns", "exec", srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080", "--fastopen"))
	pcap := filepath.Join(t.TempDir(), "tfo.pcap")
	dump := exec.Command("ip", "netns", "exec", srv, "tcpdump", "-Z", "root", "--immediate-mode", "-U", "-n", "-i", srvIf, "-w", pcap, "tcp port 8080")
	stderr, _ := dump.StderrPipe()
	background(t, dump)
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on") {
				listening <- true
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(10 * time.Second):
		t.Fatal("tcpdump did not start")
	}
	waitListen(t, srv, 8080)

	var want []string
	for _, p := range []string{"/tfo/cookie", "/tfo/in-syn", "/tfo/in-syn-again"} {
		u := "http://192.0.2.1:8080" + p
		if out, err := exec.Command("ip", "netns", "exec", cli, "curl", "-s", "--max-time", "10", "--tcp-fastopen", u).CombinedOutput(); err != nil {
			t.Fatalf("curl %s: %v %s", u, err, out)
		}
		want = append(want, u)
	}
	time.Sleep(200 * time.Millisecond) // the last FINs reach tcpdump
	syscall.Kill(dump.Process.Pid, syscall.SIGINT)
	if err := dump.Wait(); err != nil {
		t.Fatalf("tcpdump: %v", err)
	}

	// The capture carries what the test is about: requests in SYNs.
	out, err := exec.Command("tshark", "-r", pcap, "-Y", "tcp.flags.syn==1 && tcp.flags.ack==0 && tcp.len>0", "-T", "fields", "-e", "tcp.len").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if n := len(strings.Fields(string(out))); n != 2 {
		t.Fatalf("%d SYNs with data in the capture, want 2 (the kernel did not use Fast Open)", n)
	}
	out, err = exec.Command("tshark", "-r", pcap, "-Y", "http.request", "-T", "fields", "-e", "http.request.full_uri").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if theirs := strings.Fields(string(out)); !reflect.DeepEqual(theirs, want) {
		t.Fatalf("tshark finds %q, want %q", theirs, want)
	}

	stdout, summary, code := run(t, nil, "--dir", filepath.Join(t.TempDir(), "state"), "replay", "--all", pcap)
	var ours []string
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if _, u, ok := strings.Cut(l, "\t"); ok {
			ours = append(ours, u)
		}
	}
	if code != 0 || !reflect.DeepEqual(ours, want) {
		t.Fatalf("replay: exit %d, %q; want %q\n%s", code, ours, want, summary)
	}
	if !strings.Contains(summary, "tcp flows 3 ") {
		t.Fatalf("summary: %s; want 3 tcp flows", summary)
	}
}
