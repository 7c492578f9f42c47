package main_test

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// recordCurl runs httpserver.py (with serverArgs) in a server namespace
// and each curl command line in a client namespace, after `sysctl -w`
// of each setting in both, and returns what tcpdump recorded on the
// server's veth.
func recordCurl(t *testing.T, sysctls, serverArgs []string, curls ...[]string) string {
	t.Helper()
	srv, cli, srvIf := nettest.Veth(t)
	for _, ns := range []string{srv, cli} {
		for _, s := range sysctls {
			if out, err := nettest.Command(ns, "sysctl", "-w", s).CombinedOutput(); err != nil {
				t.Fatalf("sysctl in %s: %v %s", ns, err, out)
			}
		}
	}
	args := append([]string{"netns", "exec", srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080"}, serverArgs...)
	background(t, exec.Command("ip", args...))
	pcap := filepath.Join(t.TempDir(), "curl.pcap")
	// --immediate-mode: else packets wait in the ring's block for up to a
	// second, and stopping tcpdump loses them.
	dump := nettest.Command(srv, "tcpdump", "-Z", "root", "--immediate-mode", "-U", "-n", "-i", srvIf, "-w", pcap, "tcp port 8080")
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
	nettest.WaitListen(t, srv, 8080)
	for _, c := range curls {
		args := append([]string{"netns", "exec", cli, "curl", "-s", "-o", "/dev/null", "--max-time", "10"}, c...)
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("curl %q: %v %s", c, err, out)
		}
	}
	time.Sleep(200 * time.Millisecond) // the last FINs reach tcpdump
	syscall.Kill(dump.Process.Pid, syscall.SIGINT)
	if err := dump.Wait(); err != nil {
		t.Fatalf("tcpdump: %v", err)
	}
	return pcap
}

// tsharkField prints one field of the frames that match filter.
func tsharkField(t *testing.T, pcap, filter, field string) []string {
	t.Helper()
	out, err := exec.Command("tshark", "-r", pcap, "-Y", filter, "-T", "fields", "-e", field).Output()
	if err != nil {
		t.Fatalf("tshark -Y %s: %v", filter, err)
	}
	return strings.Fields(string(out))
}

// replayURLs replays pcap with --all and returns the URLs and the summary.
func replayURLs(t *testing.T, pcap string) ([]string, string) {
	t.Helper()
	stdout, summary, code := run(t, nil, "--dir", filepath.Join(t.TempDir(), "state"), "replay", "--all", pcap)
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s", code, summary)
	}
	var urls []string
	for l := range strings.Lines(stdout) {
		if _, u, ok := strings.Cut(strings.TrimSpace(l), "\t"); ok {
			urls = append(urls, u)
		}
	}
	return urls, summary
}

// TCP Fast Open, made by the kernel: with net.ipv4.tcp_fastopen=3 in both
// namespaces, curl --tcp-fastopen asks for a cookie on its first
// connection and sends its request in the SYN on the next ones. tcpdump
// records them on the veth; replay finds every request, as tshark does,
// and counts one flow per connection.
func TestReplayFastOpen(t *testing.T) {
	t.Parallel()
	var want []string
	var curls [][]string
	for _, p := range []string{"/tfo/cookie", "/tfo/in-syn", "/tfo/in-syn-again"} {
		want = append(want, "http://192.0.2.1:8080"+p)
		curls = append(curls, []string{"--tcp-fastopen", want[len(want)-1]})
	}
	pcap := recordCurl(t, []string{"net.ipv4.tcp_fastopen=3"}, []string{"--fastopen"}, curls...)
	// The capture carries what the test is about: requests in SYNs.
	if n := len(tsharkField(t, pcap, "tcp.flags.syn==1 && tcp.flags.ack==0 && tcp.len>0", "tcp.len")); n != 2 {
		t.Fatalf("%d SYNs with data in the capture, want 2 (the kernel did not use Fast Open)", n)
	}
	if theirs := tsharkField(t, pcap, "http.request", "http.request.full_uri"); !reflect.DeepEqual(theirs, want) {
		t.Fatalf("tshark finds %q, want %q", theirs, want)
	}
	ours, summary := replayURLs(t, pcap)
	if !reflect.DeepEqual(ours, want) {
		t.Fatalf("replay: %q; want %q\n%s", ours, want, summary)
	}
	if !strings.Contains(summary, "tcp flows 3 ") {
		t.Fatalf("summary: %s; want 3 tcp flows", summary)
	}
}

// Retransmissions after FIN, from a real connection: curl fetches two
// URLs on one keep-alive connection; editcap copies the frames carrying
// the requests, half a second later, after the connection closed, and
// mergecap puts them in time order, as a retransmission would come.
// replay reports each request once, and one flow, as tshark does.
func TestReplayRetransmittedAfterFIN(t *testing.T) {
	t.Parallel()
	want := []string{"http://192.0.2.1:8080/fin/one", "http://192.0.2.1:8080/fin/two"}
	pcap := recordCurl(t, nil, nil, want)
	frames := tsharkField(t, pcap, "http.request", "frame.number")
	if len(frames) != 2 {
		t.Fatalf("%d requests in the capture, want 2", len(frames))
	}
	dir := filepath.Dir(pcap)
	late := []string{pcap}
	for i, f := range frames {
		one, moved := filepath.Join(dir, "one"+strconv.Itoa(i)+".pcap"), filepath.Join(dir, "late"+strconv.Itoa(i)+".pcap")
		for _, args := range [][]string{{"-r", pcap, one, f}, {"-t", "0.5", one, moved}} {
			if out, err := exec.Command("editcap", args...).CombinedOutput(); err != nil {
				t.Fatalf("editcap %q: %v %s", args, err, out)
			}
		}
		late = append(late, moved)
	}
	merged := filepath.Join(dir, "merged.pcap")
	if out, err := exec.Command("mergecap", append([]string{"-F", "pcap", "-w", merged}, late...)...).CombinedOutput(); err != nil {
		t.Fatalf("mergecap: %v %s", err, out)
	}
	// The copies come after both FINs.
	fins := tsharkField(t, merged, "tcp.flags.fin==1", "frame.number")
	reqs := tsharkField(t, merged, "tcp.len>0 && tcp.srcport!=8080", "frame.number")
	if len(fins) != 2 || len(reqs) != 4 || atoi(t, reqs[2]) < atoi(t, fins[1]) {
		t.Fatalf("merged capture: FINs in frames %v, client data in %v; want the last two after the FINs", fins, reqs)
	}
	if theirs := tsharkField(t, merged, "http.request", "http.request.full_uri"); !reflect.DeepEqual(theirs, want) {
		t.Fatalf("tshark finds %q, want %q", theirs, want)
	}
	ours, summary := replayURLs(t, merged)
	if !reflect.DeepEqual(ours, want) {
		t.Fatalf("replay: %q; want %q\n%s", ours, want, summary)
	}
	if !strings.Contains(summary, "tcp flows 1 ") || !strings.Contains(summary, "late segments of closed connections 2 ") {
		t.Fatalf("summary: %s; want 1 tcp flow and the 2 copies counted late", summary)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
