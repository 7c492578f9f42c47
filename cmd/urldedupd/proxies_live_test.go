package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// tcpdump records iface in ns, for filter, into file until the returned
// function stops it (SIGINT, by pid) and waits for it.
func tcpdump(t *testing.T, ns, iface, filter, file string) (stop func()) {
	t.Helper()
	cmd := nettest.Command(ns, "tcpdump", "--immediate-mode", "-U", "-Z", "root", "-i", iface, "-w", file, filter)
	stderr, _ := cmd.StderrPipe()
	background(t, cmd)
	started := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case started <- sc.Text():
			default:
			}
		}
	}()
	select {
	case l := <-started:
		if !strings.Contains(l, "listening on") {
			t.Fatalf("tcpdump said %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tcpdump did not start")
	}
	return func() {
		time.Sleep(200 * time.Millisecond) // the last ACKs and FINs
		syscall.Kill(cmd.Process.Pid, syscall.SIGINT)
		cmd.Wait()
	}
}

// hostsIn makes name resolve to addr inside ns: `ip netns exec` mounts
// /etc/netns/NS/hosts over /etc/hosts.
func hostsIn(t *testing.T, ns, name, addr string) {
	t.Helper()
	dir := filepath.Join("/etc/netns", ns)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "hosts"), []byte("127.0.0.1 localhost\n"+addr+" "+name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// inNS runs a command in ns and fails the test if it fails.
func inNS(t *testing.T, ns string, args ...string) string {
	t.Helper()
	out, err := nettest.Command(ns, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return string(out)
}

type replayRecord struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	Tunnel bool   `json:"tunnel"`
}

// replayJSON replays file with --json into a fresh state and returns the
// records, as "METHOD URL" (plus " tunnel"), sorted, and the summary.
func replayJSON(t *testing.T, file string) ([]string, map[string]uint64) {
	t.Helper()
	state := filepath.Join(t.TempDir(), "state")
	if _, stderr, code := run(t, nil, "--dir", state, "init"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	out, stderr, code := run(t, nil, "--dir", state, "replay", "--json", file)
	if code != 0 {
		t.Fatalf("replay %s: exit %d\n%s", file, code, stderr)
	}
	var recs []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var r replayRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		s := r.Method + " " + r.URL
		if r.Tunnel {
			s += " tunnel"
		}
		recs = append(recs, s)
	}
	slices.Sort(recs)
	summary, err := flatSummary(strings.TrimSpace(stderr))
	if err != nil {
		t.Fatalf("summary %q: %v", stderr, err)
	}
	return recs, summary
}

// tsharkRequests returns what tshark decodes as HTTP requests in file:
// "METHOD HOST URI", sorted.
func tsharkRequests(t *testing.T, file string, extra ...string) []string {
	t.Helper()
	args := append([]string{"-r", file, "-Y", "http.request", "-T", "fields", "-E", "separator=/s",
		"-e", "http.request.method", "-e", "http.host", "-e", "http.request.uri"}, extra...)
	out, err := exec.Command("tshark", args...).Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var reqs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			reqs = append(reqs, l)
		}
	}
	slices.Sort(reqs)
	return reqs
}

// SOCKS through a real SOCKS server (Dante), curl --socks4, --socks5 and
// --socks5-hostname, and SOCKS4a through ssh -D (Dante does not speak 4a):
// each request after the handshake is found, its URL from the Host header
// or, without one, from the SOCKS destination. The ssh connection itself
// is not HTTP and is no parse error.
func TestReplaySOCKS(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	hostsIn(t, srv, "web.test", "192.0.2.1")
	dir := t.TempDir()
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")
	conf := filepath.Join(dir, "danted.conf")
	os.WriteFile(conf, []byte(`logoutput: stderr
internal: 192.0.2.1 port = 1080
external: 192.0.2.1
clientmethod: none
socksmethod: none
user.privileged: root
user.unprivileged: nobody
client pass { from: 0.0.0.0/0 to: 0.0.0.0/0 }
socks pass { from: 0.0.0.0/0 to: 0.0.0.0/0 }
`), 0o644)
	nettest.Start(t, srv, "danted", "-f", conf, "-N", "1", "-p", filepath.Join(dir, "danted.pid"))

	// sshd in the server's namespace, ssh -D in the client's.
	for _, k := range []string{"host", "user"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
	}
	pub, _ := os.ReadFile(filepath.Join(dir, "user.pub"))
	os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600)
	os.MkdirAll("/run/sshd", 0o755) // sshd's privilege separation directory
	sshdConf := filepath.Join(dir, "sshd_config")
	os.WriteFile(sshdConf, []byte(fmt.Sprintf(`ListenAddress 192.0.2.1:2222
HostKey %[1]s/host
PidFile %[1]s/sshd.pid
AuthorizedKeysFile %[1]s/authorized_keys
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
AllowTcpForwarding yes
`, dir)), 0o644)
	nettest.Start(t, srv, "/usr/sbin/sshd", "-D", "-e", "-f", sshdConf)
	nettest.WaitListen(t, srv, 8080)
	nettest.WaitListen(t, srv, 1080)
	nettest.WaitListen(t, srv, 2222)

	srvPcap, loPcap := filepath.Join(dir, "socks.pcap"), filepath.Join(dir, "ssh-d.pcap")
	stopSrv := tcpdump(t, srv, srvIf, "tcp port 1080 or tcp port 2222", srvPcap)
	stopLo := tcpdump(t, cli, "lo", "tcp port 1081", loPcap)
	nettest.Start(t, cli, "ssh", "-N", "-D", "127.0.0.1:1081", "-i", filepath.Join(dir, "user"),
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-p", "2222", "root@192.0.2.1")
	nettest.WaitListen(t, cli, 1081)

	curl := func(args ...string) {
		t.Helper()
		inNS(t, cli, append([]string{"curl", "-sS", "--fail", "--max-time", "10", "-o", "/dev/null"}, args...)...)
	}
	curl("--socks4", "192.0.2.1:1080", "http://192.0.2.1:8080/socks4")
	curl("--socks5", "192.0.2.1:1080", "http://192.0.2.1:8080/socks5?a=1")
	curl("--socks5-hostname", "192.0.2.1:1080", "http://web.test:8080/socks5-hostname")
	curl("--socks5-hostname", "192.0.2.1:1080", "-0", "-H", "Host:", "http://web.test:8080/socks5-no-host")
	curl("--socks5", "192.0.2.1:1080", "-0", "-H", "Host:", "http://192.0.2.1:8080/socks5-ip-no-host")
	curl("--socks4", "192.0.2.1:1080", "-0", "-H", "Host:", "http://192.0.2.1:8080/socks4-no-host")
	curl("--socks4a", "127.0.0.1:1081", "http://web.test:8080/socks4a")
	curl("--socks4a", "127.0.0.1:1081", "-0", "-H", "Host:", "http://web.test:8080/socks4a-no-host")
	curl("--socks5-hostname", "127.0.0.1:1081", "http://web.test:8080/ssh-socks5")
	stopLo()
	stopSrv()

	got, summary := replayJSON(t, srvPcap)
	want := []string{
		"GET http://192.0.2.1:8080/socks4",
		"GET http://192.0.2.1:8080/socks4-no-host",
		"GET http://192.0.2.1:8080/socks5-ip-no-host",
		"GET http://192.0.2.1:8080/socks5?a=1",
		"GET http://web.test:8080/socks5-hostname",
		"GET http://web.test:8080/socks5-no-host",
	}
	if !slices.Equal(got, want) || summary["parse_errors"] != 0 {
		t.Errorf("Dante capture: %q, %d parse errors; want %q, 0", got, summary["parse_errors"], want)
	}
	// tshark decodes SOCKS on port 1080 and the HTTP after it: the same
	// requests; without Host it has no host (we take the SOCKS
	// destination's).
	ts := tsharkRequests(t, srvPcap)
	wantTS := []string{
		"GET  /socks4-no-host", "GET  /socks5-ip-no-host", "GET  /socks5-no-host",
		"GET 192.0.2.1:8080 /socks4", "GET 192.0.2.1:8080 /socks5?a=1", "GET web.test:8080 /socks5-hostname",
	}
	if !slices.Equal(ts, wantTS) {
		t.Errorf("tshark on the Dante capture: %q, want %q", ts, wantTS)
	}

	got, summary = replayJSON(t, loPcap)
	want = []string{
		"GET http://web.test:8080/socks4a",
		"GET http://web.test:8080/socks4a-no-host",
		"GET http://web.test:8080/ssh-socks5",
	}
	if !slices.Equal(got, want) || summary["parse_errors"] != 0 {
		t.Errorf("ssh -D capture: %q, %d parse errors; want %q, 0", got, summary["parse_errors"], want)
	}
}

// HTTP CONNECT through a real proxy (tinyproxy) to an HTTPS server
// (openssl s_server) and to an HTTP server: each CONNECT is one record of
// the authority it opens, marked a tunnel; the HTTP request inside the
// second tunnel is not parsed (no parse error, no record), as tshark does.
// The TLS ClientHello inside the first tunnel is read (a TLS record, no
// method, with the tunnel's port), as is the one of a TLS connection
// straight to the server: two records of https://web.test:8443/.
func TestReplayCONNECT(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	hostsIn(t, srv, "web.test", "192.0.2.1")
	hostsIn(t, cli, "web.test", "192.0.2.1")
	dir := t.TempDir()
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")
	key, cert := filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	if out, err := exec.Command("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
		"-keyout", key, "-out", cert, "-subj", "/CN=web.test", "-days", "1").CombinedOutput(); err != nil {
		t.Fatalf("openssl req: %v %s", err, out)
	}
	nettest.Start(t, srv, "openssl", "s_server", "-quiet", "-accept", "192.0.2.1:8443",
		"-cert", cert, "-key", key, "-www")
	conf := filepath.Join(dir, "tinyproxy.conf")
	os.WriteFile(conf, []byte(`User nobody
Group nogroup
Port 3128
Listen 192.0.2.1
Timeout 30
MaxClients 20
Allow 192.0.2.0/24
ConnectPort 8443
ConnectPort 8080
`), 0o644)
	nettest.Start(t, srv, "tinyproxy", "-d", "-c", conf)
	nettest.WaitListen(t, srv, 8080)
	nettest.WaitListen(t, srv, 8443)
	nettest.WaitListen(t, srv, 3128)

	pcap := filepath.Join(dir, "connect.pcap")
	stop := tcpdump(t, srv, srvIf, "tcp port 3128 or tcp port 8443", pcap)
	curl := func(args ...string) {
		t.Helper()
		inNS(t, cli, append([]string{"curl", "-sS", "--fail", "--max-time", "10", "-o", "/dev/null"}, args...)...)
	}
	curl("-p", "-x", "http://192.0.2.1:3128", "-k", "https://web.test:8443/secret-path")
	curl("-p", "-x", "http://192.0.2.1:3128", "http://web.test:8080/inside-tunnel")
	curl("-x", "http://192.0.2.1:3128", "http://web.test:8080/via-proxy")
	curl("-k", "https://web.test:8443/direct")
	stop()

	got, summary := replayJSON(t, pcap)
	want := []string{
		" https://web.test:8443/", // TLS records have no method
		" https://web.test:8443/",
		"CONNECT web.test:8080 tunnel",
		"CONNECT web.test:8443 tunnel",
		"GET http://web.test:8080/inside-tunnel", // plain HTTP/1 inside a CONNECT: read (tshark 4.0 does not read this one)
		"GET http://web.test:8080/via-proxy",
	}
	if !slices.Equal(got, want) || summary["parse_errors"] != 0 {
		t.Errorf("got %q, %d parse errors; want %q, 0", got, summary["parse_errors"], want)
	}
	// tshark: the same requests (its URI of a CONNECT is the authority).
	ts := tsharkRequests(t, pcap)
	wantTS := []string{"CONNECT web.test:8080 web.test:8080", "CONNECT web.test:8443 web.test:8443",
		"GET web.test:8080 http://web.test:8080/via-proxy"}
	if !slices.Equal(ts, wantTS) {
		t.Errorf("tshark: %q, want %q", ts, wantTS)
	}
}
