package main_test

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Live VLAN tags: the kernel takes the outer 802.1Q or 802.1ad tag off a
// received frame and hands it to packet sockets beside the frame. Tagged
// HTTP requests are injected with a raw socket into one end of a veth
// (scripts/vlaninject.py: untagged, 802.1Q, 802.1ad, and 802.1ad over
// 802.1Q); capture --iface on the other end reports each with the
// encapsulation it had on the wire, and tcpdump's pcap of the same frames
// (libpcap puts the tag back too) replays to the same records.
func TestCaptureLiveVLANTags(t *testing.T) {
	srv, cli, srvIf := netns(t)
	cliIf := strings.TrimSuffix(srvIf, "a") + "b"
	out, err := exec.Command("ip", "-n", srv, "link", "show", srvIf).Output()
	mac := regexp.MustCompile(`link/ether ([0-9a-f:]{17})`).FindSubmatch(out)
	if err != nil || mac == nil {
		t.Fatalf("the server's MAC address: %v %s", err, out)
	}
	tmp := t.TempDir()
	pcap := filepath.Join(tmp, "vlan.pcap")
	dump := exec.Command("ip", "netns", "exec", srv, "tcpdump", "-i", srvIf, "--immediate-mode", "-U", "-w", pcap)
	dumpErr := &lockedBuffer{}
	dump.Stderr = dumpErr
	background(t, dump)
	for i := 0; !strings.Contains(dumpErr.String(), "listening on"); i++ {
		if i == 100 {
			t.Fatalf("tcpdump: %s", dumpErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	capt := exec.Command("ip", "netns", "exec", srv, binary, "--dir", filepath.Join(tmp, "state"), "capture", "--json", "--iface", srvIf)
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
	sent, err := exec.Command("ip", "netns", "exec", cli, "python3", "../../scripts/vlaninject.py",
		cliIf, string(mac[1]), "192.0.2.2", "192.0.2.1", "8080").CombinedOutput()
	if err != nil || strings.TrimSpace(string(sent)) != "8" {
		t.Fatalf("vlaninject: %v %s", err, sent)
	}
	want := []string{"http://vlan.example/plain ", "http://vlan.example/dot1q vlan",
		"http://vlan.example/dot1ad qinq", "http://vlan.example/qinq qinq/vlan"}
	records := func(out []string) []string {
		t.Helper()
		var got []string
		for _, l := range out {
			var r struct{ URL, Encap string }
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			got = append(got, r.URL+" "+r.Encap)
		}
		return got
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		n := len(lines)
		mu.Unlock()
		if n >= len(want) {
			break
		}
	}
	time.Sleep(300 * time.Millisecond)
	syscall.Kill(capt.Process.Pid, syscall.SIGINT)
	syscall.Kill(dump.Process.Pid, syscall.SIGINT)
	var summary string
	for l := range errLines {
		summary += l + "\n"
	}
	if err := capt.Wait(); err != nil {
		t.Fatalf("capture exit: %v\n%s", err, summary)
	}
	dump.Wait()
	mu.Lock()
	live := records(lines)
	mu.Unlock()
	if !slices.Equal(live, want) {
		t.Fatalf("capture --iface reports\n%q\nwant\n%q\n%s", live, want, summary)
	}
	stdoutReplay, stderrReplay, code := run(t, nil, "--dir", filepath.Join(tmp, "state2"), "replay", "--json", pcap)
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderrReplay)
	}
	if fromPcap := records(strings.Split(strings.TrimSpace(stdoutReplay), "\n")); !slices.Equal(fromPcap, want) {
		t.Fatalf("replay of tcpdump's pcap reports\n%q\nwant\n%q", fromPcap, want)
	}
}
