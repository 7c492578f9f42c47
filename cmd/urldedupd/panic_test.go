package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

var (
	hooksOnce sync.Once
	hooksBin  string
	hooksErr  error
)

// hooksBinary builds urldedupd with -tags testhooks, where a request whose
// URL contains $URLDEDUPD_TEST_PANIC_ON panics in the per-packet path.
func hooksBinary(t *testing.T) string {
	t.Helper()
	hooksOnce.Do(func() {
		hooksBin = filepath.Join(filepath.Dir(binary), "urldedupd-testhooks")
		out, err := exec.Command("go", "build", "-tags", "testhooks", "-o", hooksBin, ".").CombinedOutput()
		if err != nil {
			hooksErr = fmt.Errorf("build -tags testhooks: %v\n%s", err, out)
		}
	})
	if hooksErr != nil {
		t.Fatal(hooksErr)
	}
	return hooksBin
}

// A panic while a packet is processed (injected through the test hook, on
// one of 20 requests) is reported with the file and packet number and the
// connection dropped, counted in the summary and the --json summary, and
// the replay goes on: the other 19 are recorded, exit code 0.
func TestReplayRecoversFromPanic(t *testing.T) {
	t.Parallel()
	bin := hooksBinary(t)
	tmp := t.TempDir()
	pcap := filepath.Join(tmp, "panic.pcap")
	writeCapture(t, pcap, 20, 0)
	for _, asJSON := range []bool{false, true} {
		dir := filepath.Join(tmp, fmt.Sprint("state-", asJSON))
		args := []string{"--dir", dir, "replay", pcap}
		if asJSON {
			args = append(args, "--json")
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "URLDEDUPD_TEST_PANIC_ON=/page/7")
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("replay (json %v): %v\n%s", asJSON, err, errOut.String())
		}
		stderr := errOut.String()
		t.Logf("stderr:\n%s", stderr)
		// Connection 7 is packets 15 (SYN) and 16 (the request).
		want := pcap + ": packet 16: panic while processing a packet: test hook: URL contains /page/7; " +
			"dropped the connection 198.51.0.7:10000 -> 192.0.2.1:80; capture goes on"
		if !strings.Contains(stderr, want) {
			t.Errorf("no report %q", want)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 19 || strings.Contains(out.String(), "/page/7\n") || strings.Contains(out.String(), `/page/7"`) {
			t.Errorf("%d records, want the 19 others:\n%s", len(lines), out.String())
		}
		if !asJSON {
			if !strings.Contains(stderr, "requests 19  new 19") || !strings.Contains(stderr, "panics recovered 1\n") {
				t.Errorf("summary does not count the panic")
			}
			continue
		}
		sl := strings.Split(strings.TrimSpace(stderr), "\n")
		sum, err := flatSummary(sl[len(sl)-1])
		if err != nil {
			t.Fatalf("--json summary %q: %v", sl[len(sl)-1], err)
		}
		if sum["panics_recovered"] != 1 || sum["requests"] != 19 || sum["packets"] != 40 {
			t.Errorf("--json summary %v", sum)
		}
	}
}

// serve --iface: a panic while a captured packet is processed is logged
// with the interface and packet, counted in the metrics, and capture goes
// on: a request sent afterwards is logged, the source stays up.
func TestServeRecoversFromPanic(t *testing.T) {
	t.Parallel()
	bin := hooksBinary(t)
	srv, cli, srvIf := nettest.Veth(t)
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")
	tmp := t.TempDir()
	dir, events := filepath.Join(tmp, "state"), filepath.Join(tmp, "events.jsonl")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	cmd := nettest.Command(srv, bin, "--dir", dir, "serve", "--log-format", "json",
		"--iface", srvIf, "--bpf", "tcp port 8080", "--events", events)
	cmd.Env = append(os.Environ(), "URLDEDUPD_TEST_PANIC_ON=/boom")
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	sock := filepath.Join(dir, "api.sock")
	for i := 0; !strings.Contains(logs.String(), "capture started"); i++ {
		if i == 200 {
			t.Fatalf("serve did not start capturing:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	nettest.WaitListen(t, srv, 8080)
	for _, path := range []string{"/before", "/boom", "/after"} {
		if out, err := nettest.Command(cli, "curl", "-s", "-o", "/dev/null", "--max-time", "10",
			"http://192.0.2.1:8080"+path).CombinedOutput(); err != nil {
			t.Fatalf("curl %s: %v %s", path, err, out)
		}
	}
	got := waitLines(t, events, 2)
	if want := []string{"http://192.0.2.1:8080/before", "http://192.0.2.1:8080/after"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events %q, want %q\n%s", got, want, logs.String())
	}
	var logged map[string]any
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "recovered from a panic") {
			json.Unmarshal([]byte(l), &logged)
		}
	}
	t.Logf("logged: %v", logged["err"])
	if logged == nil || logged["iface"] != srvIf || !regexp.MustCompile(`^capture: `+srvIf+`: packet \d+: panic while processing a packet: test hook: URL contains /boom; dropped the connection 192\.0\.2\.2:\d+ -> 192\.0\.2\.1:8080$`).MatchString(fmt.Sprint(logged["err"])) {
		t.Fatalf("panic log line: %v\n%s", logged, logs.String())
	}
	metric := func(name string) string {
		resp, err := unixClient(sock).Get("http://urldedupd/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, name+"{") {
				return l
			}
		}
		return ""
	}
	deadline := time.Now().Add(10 * time.Second)
	for metric("urldedupd_capture_panics_total") != `urldedupd_capture_panics_total{source="`+srvIf+`"} 1` {
		if time.Now().After(deadline) {
			t.Fatalf("metrics: %q", metric("urldedupd_capture_panics_total"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if l := metric("urldedupd_source_up"); !strings.HasSuffix(l, " 1") {
		t.Fatalf("source after the panic: %q", l)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve exit: %v\n%s", err, logs.String())
	}
}
