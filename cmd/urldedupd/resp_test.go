package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The RESP front end against real clients: redis-cli and redis-py
// (Debian's python3-redis, run by /usr/bin/python3), on loopback.

const pyRedis = "/usr/bin/python3"

// needRESPClients skips the test when redis-cli or python3-redis is
// missing (scripts/install-deps.sh installs both).
func needRESPClients(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not installed (scripts/install-deps.sh)")
	}
	if err := exec.Command(pyRedis, "-c", "import redis").Run(); err != nil {
		t.Skip("python3-redis not installed (scripts/install-deps.sh)")
	}
}

// freePort returns a loopback port nobody listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// serveRESP starts serve on a new state with the RESP front end on a
// loopback port, and returns the process and the port.
func serveRESP(t *testing.T, extra ...string) (*exec.Cmd, string, string) {
	t.Helper()
	return serveRESPOn(t, nil, extra...)
}

// serveRESPOn is serveRESP on a state made by init with initArgs.
func serveRESPOn(t *testing.T, initArgs []string, extra ...string) (*exec.Cmd, string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if _, stderr, code := run(t, nil, append([]string{"--dir", dir, "init"}, initArgs...)...); code != 0 {
		t.Fatal(stderr)
	}
	port := freePort(t)
	cmd, _ := serve(t, dir, append([]string{"--events", os.DevNull, "--resp-listen", "127.0.0.1:" + port}, extra...)...)
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			break
		}
		if i == 200 {
			t.Fatal("serve did not listen on --resp-listen")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cmd, dir, port
}

// redisCLI runs redis-cli against port, bounded, and returns its output.
func redisCLI(t *testing.T, port string, stdin io.Reader, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "redis-cli", append([]string{"-h", "127.0.0.1", "-p", port}, args...)...)
	cmd.Stdin = stdin
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %q: %v\n%s", args, err, out)
	}
	return strings.TrimRight(string(out), "\n")
}

// Every command through redis-cli, one process a command (RESP2), and
// interactively (a terminal: redis-cli asks COMMAND DOCS first).
func TestRespRedisCli(t *testing.T) {
	t.Parallel()
	needRESPClients(t)
	sock := filepath.Join(t.TempDir(), "resp.sock")
	cmd, _, port := serveRESP(t, "--resp-socket", sock)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "PONG"},
		{[]string{"PING", "hi there"}, "hi there"},
		{[]string{"ECHO", "hi"}, "hi"},
		{[]string{"BF.ADD", "urls", "http://cli.example/a"}, "1"},
		{[]string{"BF.ADD", "urls", "HTTP://CLI.EXAMPLE:80/a#frag"}, "0"}, // the same URL, normalized
		{[]string{"BF.ADD", "crawl", "http://cli.example/a"}, "1"},        // another key, another item
		{[]string{"BF.MADD", "crawl", "http://cli.example/a", "http://cli.example/b", "http://cli.example/b"}, "0\n1\n0"},
		{[]string{"BF.EXISTS", "crawl", "http://cli.example/b"}, "1"},
		{[]string{"BF.EXISTS", "other", "http://cli.example/b"}, "0"},
		{[]string{"BF.MEXISTS", "urls", "http://cli.example/a", "http://cli.example/zz"}, "1\n0"},
		{[]string{"BF.ADD", "fp", "3f2a0c9e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39"}, "1"}, // a Scrapy fingerprint
		{[]string{"BF.EXISTS", "fp", "3f2a0c9e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39"}, "1"},
		{[]string{"BF.INFO", "urls", "ITEMS"}, "4"},
		{[]string{"BF.CARD", "urls"}, "4"},
		{[]string{"BF.INFO", "urls", "NOPE"}, "ERR Invalid information value"},
		{[]string{"SELECT", "0"}, "OK"},
		{[]string{"SELECT", "1"}, "ERR DB index is out of range"},
		{[]string{"CLIENT", "SETNAME", "bad name"}, "ERR Client names cannot contain spaces, newlines or special characters."},
		{[]string{"COMMAND", "COUNT"}, "15"},
		{[]string{"BF.FORGET", "urls", "http://cli.example/a"}, "ERR state: " + dirOf(cmd) + ": cannot forget a URL: layout bitmap keeps a URL in bits other URLs share, so clearing them would forget those URLs too (only keyed and keyed-window states can forget)"},
		{[]string{"COMMAND", "INFO", "bf.madd", "get"}, "bf.madd\n-3\nwrite\ndenyoom\nfast\n1\n1\n1"},
		{[]string{"AUTH", "x"}, "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"},
		{[]string{"NOPE", "x"}, "ERR unknown command 'NOPE'"},
		{[]string{"BF.ADD", "urls"}, "ERR wrong number of arguments for 'bf.add' command"},
		{[]string{"BF.ADD", "urls", " "}, "ERR the item is empty"},
		{[]string{"BF.MADD", "urls", "http://a/", strings.Repeat("x", 70_000)}, "ERR item 2 is 70000 bytes, over the limit of 65536"},
		{[]string{"QUIT"}, "OK"},
	}
	for _, tt := range tests {
		if got := redisCLI(t, port, nil, tt.args...); got != tt.want {
			t.Errorf("%.60q: %.200q, want %q", tt.args, got, tt.want)
		}
	}
	// The Unix socket: the same state, the same commands.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", "-s", sock, "BF.MADD", "urls", "http://cli.example/a", "http://cli.example/sock").CombinedOutput()
	if err != nil || string(out) != "0\n1\n" {
		t.Errorf("over --resp-socket: %q, %v", out, err)
	}
	info := redisCLI(t, port, nil, "BF.INFO", "urls")
	// 4 or 5: the state is measured at most once a second.
	if !regexp.MustCompile(`^Capacity\n0\nSize\n536870912\nNumber of filters\n1\nNumber of items inserted\n[45]\nExpansion rate\n0$`).MatchString(info) {
		t.Errorf("BF.INFO: %q", info)
	}
	if hello := redisCLI(t, port, nil, "-3", "HELLO", "3"); !strings.Contains(hello, "proto 3") {
		t.Errorf("HELLO 3: %q", hello)
	}

	// Interactively, on a terminal (script(1) makes one; TERM=dumb keeps
	// redis-cli's line editor from asking the terminal questions).
	if _, err := exec.LookPath("script"); err != nil {
		t.Log("script(1) not installed: redis-cli on a terminal not tried")
	} else {
		in := "PING\nBF.ADD tty http://tty.example/\nBF.ADD tty http://tty.example/\nHELLO 3\nBF.MEXISTS tty http://tty.example/ http://b/\nexit\n"
		tty := exec.CommandContext(ctx, "script", "-qec", "redis-cli -h 127.0.0.1 -p "+port, os.DevNull)
		tty.Env = append(os.Environ(), "TERM=dumb")
		tty.Stdin = strings.NewReader(in)
		out, err = tty.CombinedOutput()
		if err != nil {
			t.Fatalf("interactive redis-cli: %v\n%s", err, out)
		}
		for _, want := range []string{"> PONG", "> (integer) 1", "> (integer) 0", "2# \"version\" => \"7.0.0\"", "1) (integer) 1\r\n2) (integer) 0"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("interactive redis-cli: no %q in\n%s", want, out)
			}
		}
	}
	stopServe(t, cmd)
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("--resp-socket after exit: %v", err)
	}
}

// Every command through redis-py (RESP2), and RESP3 after HELLO 3 over a
// socket (python3-redis 4.3 speaks only RESP2), with and without AUTH.
func TestRespRedisPy(t *testing.T) {
	t.Parallel()
	needRESPClients(t)
	for _, token := range []string{"", "s3cret-token"} {
		var extra []string
		if token != "" {
			extra = []string{"--token", token}
		}
		_, _, port := serveRESP(t, extra...)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err := exec.CommandContext(ctx, pyRedis, "testdata/resp_client.py", "commands", port, token).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("resp_client.py: %v\n%s", err, out)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if r3, ok := got["resp3"].(string); ok { // the connection's id varies
			got["resp3"] = regexp.MustCompile(`(\$2\r\nid\r\n:)\d+`).ReplaceAllString(r3, "${1}N")
		}
		var pipeline []any
		for i := range 50 {
			pipeline = append(pipeline, float64(b2f(i < 25)), true)
		}
		want := map[string]any{
			"ping": true, "echo": "hello", "add": []any{1.0, 0.0, 1.0}, "madd": []any{1.0, 0.0, 0.0, 1.0},
			"exists": []any{1.0, 0.0}, "mexists": []any{1.0, 0.0},
			"info": map[string]any{"capacity": 0.0, "size": 536870912.0, "filters": 1.0, "items": 4.0, "expansion": 0.0},
			"card": 4.0, "client_name": "resp-test", "client_id": true, "select": true, "command_count": 15.0,
			"unknown": "unknown command 'FLUSHALL'", "empty": "the item is empty", "pipeline": pipeline,
			"resp3": "%7\r\n$6\r\nserver\r\n$9\r\nurldedupd\r\n$7\r\nversion\r\n$5\r\n7.0.0\r\n$5\r\nproto\r\n:3\r\n" +
				"$2\r\nid\r\n:N\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n" +
				"%5\r\n$8\r\nCapacity\r\n:0\r\n$4\r\nSize\r\n:536870912\r\n$17\r\nNumber of filters\r\n:1\r\n" +
				"$24\r\nNumber of items inserted\r\n:4\r\n$14\r\nExpansion rate\r\n:0\r\n" +
				"*1\r\n:1\r\n_\r\n+OK\r\n",
		}
		for k, w := range want {
			if g := got[k]; !reflect.DeepEqual(g, w) {
				t.Errorf("token %q: %s = %#v, want %#v", token, k, g, w)
			}
		}
		if len(got) != len(want) {
			t.Errorf("token %q: %d results, want %d", token, len(got), len(want))
		}
	}
}

func b2f(b bool) int {
	if b {
		return 1
	}
	return 0
}

// respConn is a raw client connection, every wait bounded.
func respConn(t *testing.T, port string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return c, bufio.NewReader(c)
}

// readAllReplies reads until the server closes the connection.
func readToEOF(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading to the end: %v (read %q)", err, b)
	}
	return string(b)
}

// A pipelined burst is answered in order, adds and dry runs interleaved
// seeing one another: each URL is looked up, added, looked up, added
// again (in BF.MADD), three times over, with ECHOs between.
func TestRespPipelineOrder(t *testing.T) {
	t.Parallel()
	_, dir, port := serveRESP(t)
	c, r := respConn(t, port)
	var req, want strings.Builder
	cmd := func(reply string, args ...string) {
		fmt.Fprintf(&req, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&req, "$%d\r\n%s\r\n", len(a), a)
		}
		want.WriteString(reply)
	}
	for i := range 300 {
		u := fmt.Sprintf("http://order.example/%d", i/3)
		first := i%3 == 0
		cmd(fmt.Sprintf(":%d\r\n", b2f(!first)), "BF.EXISTS", "k", u)
		cmd(fmt.Sprintf(":%d\r\n", b2f(first)), "BF.ADD", "k", u)
		cmd("*2\r\n:0\r\n:1\r\n", "BF.MADD", "k", u, fmt.Sprintf("http://order.example/m%d", i))
		cmd(fmt.Sprintf("$%d\r\n%d\r\n", len(fmt.Sprint(i)), i), "ECHO", fmt.Sprint(i))
	}
	cmd("+OK\r\n", "QUIT")
	if _, err := io.WriteString(c, req.String()); err != nil {
		t.Fatal(err)
	}
	if got := readToEOF(t, r); got != want.String() {
		t.Fatalf("replies differ from the order sent (%d bytes, want %d):\n%.400q", len(got), want.Len(), got)
	}

	// The metrics count every command by name and status, and the URLs.
	resp, err := unixClient(filepath.Join(dir, "api.sock")).Get("http://urldedupd/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("metrics do not parse: %v", err)
	}
	got := map[string]float64{}
	for _, name := range []string{"urldedupd_resp_requests_total", "urldedupd_resp_urls_total"} {
		for _, m := range fams[name].GetMetric() {
			k := name
			for _, l := range m.GetLabel() {
				k += " " + l.GetValue()
			}
			got[k] = m.GetCounter().GetValue()
		}
	}
	for k, v := range map[string]float64{
		"urldedupd_resp_requests_total BF.EXISTS ok": 300, "urldedupd_resp_requests_total BF.ADD ok": 300,
		"urldedupd_resp_requests_total BF.MADD ok": 300, "urldedupd_resp_requests_total ECHO ok": 300,
		"urldedupd_resp_requests_total QUIT ok": 1,
		"urldedupd_resp_urls_total new":         100 + 100 + 300, "urldedupd_resp_urls_total dup": 200 + 200 + 300, // dry runs count too, as in the API
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if fams["urldedupd_resp_request_duration_seconds"] == nil || fams["urldedupd_resp_connections"] == nil ||
		fams["urldedupd_resp_inflight_bytes"] == nil {
		t.Error("latency, connection or in-flight metrics missing")
	}
}

// AUTH: refused before, with a wrong token; accepted with the right one,
// alone or with a user, or in HELLO.
func TestRespAuth(t *testing.T) {
	t.Parallel()
	needRESPClients(t)
	_, _, port := serveRESP(t, "--token", "tok-123")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"BF.ADD", "urls", "http://auth.example/"}, "NOAUTH Authentication required."},
		{[]string{"PING"}, "NOAUTH Authentication required."},
		{[]string{"HELLO", "3"}, "NOAUTH HELLO must be called with the client already authenticated"},
		{[]string{"AUTH", "wrong"}, "WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{"AUTH", "default", "wrong"}, "WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{"--no-auth-warning", "-a", "wrong", "PING"}, "AUTH failed: WRONGPASS invalid username-password pair or user is disabled.\nNOAUTH Authentication required."},
		{[]string{"--no-auth-warning", "-a", "tok-123", "BF.ADD", "urls", "http://auth.example/"}, "1"},
		{[]string{"--no-auth-warning", "--user", "crawler", "--pass", "tok-123", "BF.ADD", "urls", "http://auth.example/"}, "0"},
		{[]string{"--no-auth-warning", "-3", "--user", "default", "--pass", "tok-123", "PING"}, "PONG"},
	} {
		if got := redisCLI(t, port, nil, tt.args...); !strings.HasPrefix(got, tt.want) {
			t.Errorf("%q: %q, want %q", tt.args, got, tt.want)
		}
	}
	// A pipeline: refused before AUTH, served after it.
	c, r := respConn(t, port)
	io.WriteString(c, "*2\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n*2\r\n$4\r\nAUTH\r\n$7\r\ntok-123\r\n*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$9\r\nhttp://a/\r\n*1\r\n$4\r\nQUIT\r\n")
	want := "-NOAUTH Authentication required.\r\n+OK\r\n:1\r\n+OK\r\n"
	if got := readToEOF(t, r); got != want {
		t.Fatalf("pipeline across AUTH: %q, want %q", got, want)
	}

	// A non-loopback --resp-listen needs --allow-remote and --token, as --listen does.
	dir := filepath.Join(t.TempDir(), "state")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--resp-listen", "192.0.2.1:6379"}, "--resp-listen 192.0.2.1:6379: listening on a non-loopback address needs --allow-remote"},
		{[]string{"--resp-listen", "0.0.0.0:6379", "--allow-remote"}, "--resp-listen 0.0.0.0:6379: listening on a non-loopback address needs a bearer token"},
		{[]string{"--resp-listen", "6379"}, `--resp-listen "6379": address 6379: missing port in address`},
	} {
		_, stderr, code := run(t, nil, append([]string{"--dir", dir, "serve", "--events", os.DevNull}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// A malformed command and an oversized one get a protocol error and their
// connection is closed; another connection, open meanwhile, goes on.
func TestRespBadInput(t *testing.T) {
	t.Parallel()
	_, _, port := serveRESP(t)
	other, otherR := respConn(t, port)
	io.WriteString(other, "*1\r\n$4\r\nPING\r\n")
	if l, _ := otherR.ReadString('\n'); l != "+PONG\r\n" {
		t.Fatalf("PING: %q", l)
	}
	for _, tt := range []struct {
		name, in, want string
	}{
		{"not a bulk", "*2\r\n$4\r\nECHO\r\n:5\r\n", "-ERR Protocol error: expected '$', got ':'\r\n"},
		{"bad length", "*1\r\n$x\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"commands before the error are answered", "*1\r\n$4\r\nPING\r\n*1\r\n$-7\r\n", "+PONG\r\n-ERR Protocol error: invalid bulk length (-7 bytes, the limit is 131072)\r\n"},
		{"a 1 GB argument announced", "*3\r\n$6\r\nBF.ADD\r\n$4\r\nurls\r\n$1073741824\r\nhttp://", "-ERR Protocol error: invalid bulk length (1073741824 bytes, the limit is 131072)\r\n"},
		{"too many arguments", "*100003\r\n", "-ERR Protocol error: invalid multibulk length (100003 arguments, over the limit of 100002)\r\n"},
		{"an inline line too long", strings.Repeat("x", 70_000), "-ERR Protocol error: too big inline request\r\n"},
	} {
		c, r := respConn(t, port)
		if _, err := io.WriteString(c, tt.in); err != nil {
			t.Fatal(err)
		}
		if got := readToEOF(t, r); got != tt.want {
			t.Errorf("%s: %.200q, want %q", tt.name, got, tt.want)
		}
	}
	// Errors of a command do not close its connection.
	io.WriteString(other, "*3\r\n$6\r\nBF.ADD\r\n$3\r\na\x00b\r\n$9\r\nhttp://a/\r\n*3\r\n$6\r\nBF.ADD\r\n$4\r\nurls\r\n$3\r\na\x00b\r\n")
	for _, want := range []string{"-ERR a key may not hold a NUL byte\r\n", "-ERR the item holds a NUL byte\r\n"} {
		if l, _ := otherR.ReadString('\n'); l != want {
			t.Fatalf("%q, want %q", l, want)
		}
	}
	io.WriteString(other, "*3\r\n$6\r\nBF.ADD\r\n$4\r\nurls\r\n$9\r\nhttp://b/\r\n")
	if l, _ := otherR.ReadString('\n'); l != ":1\r\n" {
		t.Fatalf("the other connection after the bad ones: %q", l)
	}
}

// A client that stops in the middle of a command is answered a timeout
// error and closed after --body-timeout; one idle between commands is
// closed after --idle-timeout; a client that keeps sending is served.
func TestRespStall(t *testing.T) {
	t.Parallel()
	_, _, port := serveRESP(t, "--body-timeout", "1s", "--idle-timeout", "2s")
	c, r := respConn(t, port)
	io.WriteString(c, "*3\r\n$6\r\nBF.ADD\r\n$4\r\nurls\r\n$20\r\nhttp://stal")
	if got := readToEOF(t, r); got != "-ERR timeout: command not complete within 1s\r\n" {
		t.Errorf("stalled mid-command: %q", got)
	}
	idle, idleR := respConn(t, port)
	io.WriteString(idle, "PING\r\n")
	if got := readToEOF(t, idleR); got != "+PONG\r\n" {
		t.Errorf("idle: %q", got)
	}
	// A client whose every write ends in the middle of a command, for
	// three times --body-timeout: each command is complete well within
	// it, so the connection is served throughout.
	busy, busyR := respConn(t, port)
	io.WriteString(busy, "*1\r\n$4\r\nPI")
	for i := range 30 {
		time.Sleep(100 * time.Millisecond)
		if _, err := io.WriteString(busy, "NG\r\n*1\r\n$4\r\nPI"); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if l, err := busyR.ReadString('\n'); l != "+PONG\r\n" {
			t.Fatalf("reply %d: %q, %v", i, l, err)
		}
	}
}

// Exactly once: 4 redis-py processes add overlapping URLs under the
// default key while `filter` works on the same state directory, on a
// machine kept busy: every URL is answered new exactly once across all of
// them (none lost, none twice).
func TestRespExactlyOnce(t *testing.T) {
	t.Parallel()
	needRESPClients(t)
	_, dir, port := serveRESP(t)
	tmp := t.TempDir()
	const n = 60_000
	want := map[string]bool{}
	files := make([]string, 5)
	for p := range files {
		var b strings.Builder
		for i := p * n / 8; i < p*n/8+n/2; i++ { // each a half, overlapping the next three
			u := fmt.Sprintf("http://once.example/page/%d", i%n)
			want[u] = true
			b.WriteString(u + "\n")
		}
		files[p] = filepath.Join(tmp, fmt.Sprint(p))
		if err := os.WriteFile(files[p], []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	stop := loadMachine(t) // a busy machine must change nothing
	defer stop()
	outs := make([]strings.Builder, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for p := range files {
		var cmd *exec.Cmd
		if p < 4 {
			cmd = exec.CommandContext(ctx, pyRedis, "testdata/resp_client.py", "add", port, "urls", files[p])
		} else { // filter reads its URLs as they come, while the clients run
			cmd = exec.CommandContext(ctx, binary, "--dir", dir, "filter")
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			lines, _ := os.ReadFile(files[p])
			go func() {
				defer in.Close()
				for len(lines) > 0 {
					i := bytes.IndexByte(lines[min(len(lines)-1, 40_000):], '\n') + min(len(lines)-1, 40_000) + 1
					if _, err := in.Write(lines[:i]); err != nil {
						return
					}
					lines = lines[i:]
					time.Sleep(50 * time.Millisecond)
				}
			}()
		}
		cmd.Stdout = &outs[p]
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				errs[p] = fmt.Errorf("%v: %v\n%s", cmd.Args, err, stderr.String())
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]int{}
	for p := range outs {
		for _, u := range strings.Fields(outs[p].String()) {
			got[u]++
		}
	}
	lost, twice, foreign := countOnce(want, got)
	t.Logf("%d URLs, %d answered new: %d lost, %d twice, %d foreign", len(want), len(got), lost, twice, foreign)
	if lost != 0 || twice != 0 || foreign != 0 {
		t.Fatalf("%d URLs lost, %d answered new twice, %d foreign", lost, twice, foreign)
	}
}

// SIGTERM: commands already read are answered, then the connection is
// closed and serve exits 0; a command not complete is refused.
func TestRespDrain(t *testing.T) {
	t.Parallel()
	cmd, _, port := serveRESP(t)
	c, r := respConn(t, port)
	io.WriteString(c, "*3\r\n$6\r\nBF.ADD\r\n$4\r\nurls\r\n$9\r\nhttp://d/\r\n")
	if l, _ := r.ReadString('\n'); l != ":1\r\n" {
		t.Fatalf("BF.ADD: %q", l)
	}
	io.WriteString(c, "*3\r\n$6\r\nBF.ADD\r\n$4\r\nurls\r\n$20\r\nhttp://dr") // unfinished
	time.Sleep(200 * time.Millisecond)                                        // read by the server: it is in the buffer
	idle, idleR := respConn(t, port)                                          // served once, then idle
	io.WriteString(idle, "PING\r\n")
	if l, _ := idleR.ReadString('\n'); l != "+PONG\r\n" {
		t.Fatalf("PING: %q", l)
	}
	stopServe(t, cmd)
	if got := readToEOF(t, r); got != "-ERR shutting down: command not read\r\n" {
		t.Errorf("unfinished command at SIGTERM: %q", got)
	}
	if got := readToEOF(t, idleR); got != "" {
		t.Errorf("idle connection at SIGTERM: %q", got)
	}
}

// --max-conns: a connection over the cap waits, unserved, until one
// closes. --max-inflight-bytes: of two big commands that the budget
// cannot hold together, the second is refused "busy" as its bytes arrive
// while the first is held, a small command is answered meanwhile (its
// share), the first is answered once complete, and a command bigger than
// a connection may ever hold is a protocol error.
func TestRespLimits(t *testing.T) {
	t.Parallel()
	_, dir, port := serveRESP(t, "--max-conns", "3", "--max-inflight-bytes", "1048576")
	a, aR := respConn(t, port)
	b, bR := respConn(t, port)
	small, smallR := respConn(t, port)
	for _, c := range []struct {
		c net.Conn
		r *bufio.Reader
	}{{a, aR}, {b, bR}, {small, smallR}} {
		io.WriteString(c.c, "PING\r\n")
		if l, _ := c.r.ReadString('\n'); l != "+PONG\r\n" {
			t.Fatalf("PING: %q", l)
		}
	}
	fourth, fourthR := respConn(t, port)
	io.WriteString(fourth, "PING\r\n")
	fourth.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if l, err := fourthR.ReadString('\n'); err == nil {
		t.Fatalf("a fourth connection over --max-conns 3 was served: %q", l)
	}

	// Two commands of 2,600 URLs (about 400 kB each) sent up to their
	// last item: each connection holds about 520 kB (its buffer, grown to
	// the most a command may take, and its arguments' places), and the
	// pool (4/5 of 1 MiB) holds one of them.
	big := func(c net.Conn, tag string) (last string) {
		var req strings.Builder
		fmt.Fprintf(&req, "*%d\r\n$7\r\nBF.MADD\r\n$4\r\nurls\r\n", 2+2600)
		for i := range 2600 {
			u := fmt.Sprintf("http://limits.example/%s/%0120d", tag, i)
			fmt.Fprintf(&req, "$%d\r\n%s\r\n", len(u), u)
		}
		s := req.String()
		cut := strings.LastIndex(s, "$")
		io.WriteString(c, s[:cut])
		return s[cut:]
	}
	// The server reads a connection as its bytes come: the second big
	// command is sent once the first is held (in-flight bytes, from
	// /metrics), so that the two meet in the budget whatever the pace of
	// reading.
	restA := big(a, "a")
	for i := 0; gauge(t, filepath.Join(dir, "api.sock"), "urldedupd_resp_inflight_bytes") < 400_000; i++ {
		if i == 600 {
			t.Fatal("the first big command was not held by the server within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The second cannot be held beside the first: it is refused as its
	// bytes arrive, before its end is sent (it cannot be complete yet).
	big(b, "b")
	b.SetReadDeadline(time.Now().Add(30 * time.Second))
	if l, err := bR.ReadString('\n'); l != "-ERR busy: the server's bytes in flight are at their limit, retry later\r\n" {
		t.Fatalf("the second big command, the first held: %q, %v", l, err)
	}
	io.WriteString(small, "*3\r\n$6\r\nBF.ADD\r\n$4\r\nurls\r\n$9\r\nhttp://s/\r\n")
	if l, _ := smallR.ReadString('\n'); l != ":1\r\n" {
		t.Fatalf("a small command while a big one is held: %q", l)
	}
	io.WriteString(a, restA)
	if l, _ := aR.ReadString('\n'); l != "*2600\r\n" {
		t.Fatalf("the first big command, completed: %q", l)
	}

	// Now one connection has closed: the fourth is served.
	fourth.SetReadDeadline(time.Now().Add(30 * time.Second))
	if l, _ := fourthR.ReadString('\n'); l != "+PONG\r\n" {
		t.Fatalf("the fourth connection once one closed: %q", l)
	}
	// Over what one connection may hold (its share and the pool, halved
	// for the doubling): a protocol error.
	a.Close()
	b.Close()
	huge, hugeR := respConn(t, port)
	go func() {
		fmt.Fprintf(huge, "*7\r\n$7\r\nBF.MADD\r\n$4\r\nurls\r\n")
		item := "http://huge.example/" + strings.Repeat("x", 100_000-20)
		for range 5 {
			fmt.Fprintf(huge, "$%d\r\n%s\r\n", len(item), item)
		}
	}()
	if got := readToEOF(t, hugeR); !strings.HasPrefix(got, "-ERR Protocol error: command over the limit of ") {
		t.Fatalf("a command over the limit: %q", got)
	}
}

// The flags from serve's config file; --resp-default-key names the key
// signed as the CLI signs URLs: what BF.ADD adds under it, `check` finds,
// and what it adds under another key, check does not.
func TestRespConfigFile(t *testing.T) {
	t.Parallel()
	needRESPClients(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "state")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	port := freePort(t)
	conf := filepath.Join(tmp, "serve.conf")
	os.WriteFile(conf, []byte("resp-listen = 127.0.0.1:"+port+"\nresp-default-key = seen\nevents = /dev/null\n"), 0o644)
	serve(t, dir, "--config", conf)
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			break
		}
		if i == 200 {
			t.Fatal("serve did not listen on resp-listen from its config file")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := redisCLI(t, port, nil, "BF.MADD", "seen", "http://cfg.example/a", "HTTP://CFG.EXAMPLE/a#x"); got != "1\n0" {
		t.Fatalf("BF.MADD under the default key: %q", got)
	}
	if got := redisCLI(t, port, nil, "BF.ADD", "urls", "http://cfg.example/b"); got != "1" {
		t.Fatalf("BF.ADD under another key: %q", got)
	}
	out, stderr, code := run(t, nil, "--dir", dir, "check", "http://cfg.example/a", "http://cfg.example/b")
	if code != 0 || out != "dup\thttp://cfg.example/a\nnew\thttp://cfg.example/b\n" {
		t.Fatalf("check: %d %q %s", code, out, stderr)
	}
}

// dirOf is the state directory of a serve started by serveRESP.
func dirOf(cmd *exec.Cmd) string {
	for i, a := range cmd.Args {
		if a == "--dir" && i+1 < len(cmd.Args) {
			return cmd.Args[i+1]
		}
	}
	return "?"
}

// BF.FORGET on a keyed-window state: the forgotten URL is new again at
// the next BF.ADD, its neighbour under the same key stays a duplicate,
// and an absent one answers 0.
func TestRespForget(t *testing.T) {
	t.Parallel()
	needRESPClients(t)
	cmd, _, port := serveRESPOn(t, []string{"--layout", "keyed", "--window", "30d"})
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"BF.MADD", "crawl", "http://f.example/a", "http://f.example/b"}, "1\n1"},
		{[]string{"BF.FORGET", "crawl", "http://f.example/a", "http://f.example/zz"}, "1\n0"},
		{[]string{"BF.MADD", "crawl", "http://f.example/a", "http://f.example/b"}, "1\n0"},
		{[]string{"BF.FORGET", "urls", "http://f.example/b"}, "0"}, // another key, another item
	} {
		if got := redisCLI(t, port, nil, tt.args...); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.args, got, tt.want)
		}
	}
	stopServe(t, cmd)
}
