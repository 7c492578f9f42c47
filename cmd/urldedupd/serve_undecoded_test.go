package main_test

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// serve on a veth that carries frames it cannot decode (an EtherType sent
// by a raw socket) and UDP datagrams: the metrics count the frames by
// reason and the datagrams as other (not malformed), and the log names the
// reason once, and again with the count when serve stops.
func TestServeUndecodedFrames(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	cliIf := srvIf[:len(srvIf)-1] + "b"
	dir := filepath.Join(t.TempDir(), "state")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	log := &lockedBuffer{}
	cmd, sock := serveLogging(t, log, []string{"ip", "netns", "exec", srv}, dir, "--iface", srvIf)
	time.Sleep(300 * time.Millisecond) // the capture socket is open
	send := "import socket\n" +
		"s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n" +
		"s.bind(('" + cliIf + "', 0))\n" +
		"for _ in range(30): s.send(b'\\xff' * 6 + b'\\x02\\x00\\x00\\x00\\x00\\x02' + b'\\x88\\xb5' + b'x' * 46)\n"
	if out, err := nettest.Command(cli, "python3", "-c", send).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v %s", err, out)
	}
	udp := "import socket\n" +
		"s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n" +
		"for _ in range(5): s.sendto(b'x', ('192.0.2.1', 9))\n"
	if out, err := nettest.Command(cli, "python3", "-c", udp).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v %s", err, out)
	}
	c := unixClient(sock)
	metric := func(prefix string) string {
		resp, err := c.Get("http://urldedupd/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		return ""
	}
	want := `urldedupd_capture_undecoded_frames_total{name="EtherType 0x88b5 (local experimental 1)",reason="ethertype:0x88b5",source="` + srvIf + `"} 30`
	otherFrames := func() int {
		l := metric("urldedupd_capture_other_frames_total")
		var n int
		fmt.Sscan(l[strings.LastIndex(l, " ")+1:], &n)
		return n
	}
	// 5 UDP datagrams, besides ARP and the ICMP unreachables
	for deadline := time.Now().Add(10 * time.Second); metric("urldedupd_capture_undecoded_frames_total") != want || otherFrames() < 5; {
		if time.Now().After(deadline) {
			t.Fatalf("metric %q, want %q; other frames %d, want 5 or more", metric("urldedupd_capture_undecoded_frames_total"), want, otherFrames())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if m := metric("urldedupd_capture_malformed_frames_total"); !strings.HasSuffix(m, " 0") {
		t.Fatalf("malformed: %q", m)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve exit: %v", err)
	}
	l := log.String()
	if strings.Count(l, `"msg":"frames not decoded"`) != 1 || !strings.Contains(l, `"reason":"EtherType 0x88b5 (local experimental 1)"`) ||
		!strings.Contains(l, `"undecoded":"30 frames of EtherType 0x88b5 (local experimental 1) were not decoded"`) {
		t.Fatalf("serve log:\n%s", l)
	}
}
