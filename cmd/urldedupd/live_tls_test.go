package main_test

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// capture --iface on a veth while curl makes TLS connections to three
// names, twice: each host is reported new once, the repeats dup.
func TestCaptureLiveTLS(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	dir := t.TempDir()
	key, cert := filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	if out, err := exec.Command("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
		"-keyout", key, "-out", cert, "-subj", "/CN=live.test", "-days", "1").CombinedOutput(); err != nil {
		t.Fatalf("openssl req: %v %s", err, out)
	}
	nettest.Start(t, srv, "openssl", "s_server", "-quiet", "-accept", "443", "-cert", cert, "-key", key, "-www")
	state := filepath.Join(dir, "state")
	if out, err := exec.Command(binary, "--dir", state, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	capt := nettest.Command(srv, binary, "--dir", state, "capture", "--all", "--iface", srvIf, "--bpf", "tcp port 443")
	stdout, _ := capt.StdoutPipe()
	stderr, _ := capt.StderrPipe()
	background(t, capt)
	errs := bufio.NewScanner(stderr)
	if !errs.Scan() || !strings.Contains(errs.Text(), "capturing on "+srvIf) {
		t.Fatalf("capture said %q", errs.Text())
	}
	nettest.WaitListen(t, srv, 443)
	hosts := []string{"a.tls.example", "b.tls.example", "c.tls.example"}
	for range 2 {
		for _, h := range hosts {
			curl := nettest.Command(cli, "curl", "-sk", "--max-time", "30", "-o", "/dev/null",
				"--resolve", h+":443:192.0.2.1", "https://"+h+"/")
			if out, err := curl.CombinedOutput(); err != nil {
				t.Fatalf("curl %s: %v %s", h, err, out)
			}
		}
	}
	time.Sleep(time.Second) // the last frames through the ring
	syscall.Kill(capt.Process.Pid, syscall.SIGINT)
	out := bufio.NewScanner(stdout)
	var lines []string
	for out.Scan() {
		lines = append(lines, out.Text())
	}
	var summary []string
	for errs.Scan() {
		summary = append(summary, errs.Text())
	}
	if err := capt.Wait(); err != nil {
		t.Fatalf("capture: %v\n%s", err, strings.Join(summary, "\n"))
	}
	var want []string
	for _, verdict := range []string{"new", "dup"} {
		for _, h := range hosts {
			want = append(want, verdict+"\thttps://"+h+"/")
		}
	}
	if !slices.Equal(lines, want) {
		t.Errorf("records\n%s\nwant\n%s\nsummary:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"), strings.Join(summary, "\n"))
	}
	if !slices.ContainsFunc(summary, func(l string) bool { return strings.HasPrefix(l, "records by protocol:  http 0  tls 6 ") }) {
		t.Errorf("summary:\n%s", strings.Join(summary, "\n"))
	}
}
