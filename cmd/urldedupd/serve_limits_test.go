package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// rssAnon is a process's RssAnon from /proc, in bytes.
func rssAnon(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "RssAnon:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no RssAnon in /proc/%d/status", pid)
	return 0
}

// peakRSS samples a process's RssAnon every 20 ms until the returned
// function is called, which gives the peak.
func peakRSS(t *testing.T, pid int) func() int64 {
	var mu sync.Mutex
	var peak int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if err != nil {
				return
			}
			for _, l := range strings.Split(string(b), "\n") {
				if f := strings.Fields(l); len(f) == 3 && f[0] == "RssAnon:" {
					kb, _ := strconv.ParseInt(f[1], 10, 64)
					mu.Lock()
					peak = max(peak, kb<<10)
					mu.Unlock()
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// hostileRun is scripts/hostileclient.py running against serve.
type hostileRun struct {
	cmd   *exec.Cmd
	lines chan string
}

type hostileResult struct {
	Conns    int            `json:"conns"`
	Status   map[string]int `json:"status"`
	Closed   int            `json:"closed"`
	MaxClose float64        `json:"max_close_s"`
}

// hostile starts the script with args and waits, bounded, for its "ready":
// every connection has sent what it will send.
func hostile(t *testing.T, args ...string) *hostileRun {
	t.Helper()
	cmd := exec.Command("python3", append([]string{"../../scripts/hostileclient.py"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	background(t, cmd)
	h := &hostileRun{cmd: cmd, lines: make(chan string, 2)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	select {
	case l := <-h.lines:
		if l != "ready" {
			t.Fatalf("hostileclient.py %v: %q", args, l)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("hostileclient.py %v: not ready within 60 s", args)
	}
	return h
}

// result waits, bounded, for the script's summary.
func (h *hostileRun) result(t *testing.T) hostileResult {
	t.Helper()
	var r hostileResult
	select {
	case l, ok := <-h.lines:
		if err := json.Unmarshal([]byte(l), &r); !ok || err != nil {
			t.Fatalf("hostileclient.py summary %q: %v", l, err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("hostileclient.py gave no summary within 90 s")
	}
	return r
}

// probe sends normal requests with curl, a GET of one URL and a POST of
// two, every 100 ms until stopped, and reports the failures and the
// slowest answer.
func probe(t *testing.T, sock string) (stop func() (failures []string, slowest time.Duration)) {
	quit := make(chan struct{})
	done := make(chan struct{})
	var fails []string
	var slowest time.Duration
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			t0 := time.Now()
			u := fmt.Sprintf("http://probe.example/%d", i)
			get := exec.Command("curl", "-sS", "--max-time", "5", "--unix-socket", sock, "-w", " %{http_code}", "http://x/v1/check?url="+url.QueryEscape(u))
			post := exec.Command("curl", "-sS", "--max-time", "5", "--unix-socket", sock, "-w", " %{http_code}", "--data-binary", u+"\n"+u+"/b\n", "http://x/v1/check")
			g, gerr := get.Output()
			p, perr := post.Output()
			slowest = max(slowest, time.Since(t0))
			if gerr != nil || string(g) != "new\n 200" {
				fails = append(fails, fmt.Sprintf("GET %d: %q %v", i, g, gerr))
			}
			if perr != nil || string(p) != "dup\nnew\n 200" {
				fails = append(fails, fmt.Sprintf("POST %d: %q %v", i, p, perr))
			}
			select {
			case <-quit:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() ([]string, time.Duration) {
		close(quit)
		<-done
		return fails, slowest
	}
}

// apiCounts reads urldedupd_api_requests_total for /v1/check by code.
func apiCounts(t *testing.T, sock string) map[string]float64 {
	t.Helper()
	resp, err := unixClient(sock).Get("http://urldedupd/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	for _, m := range fams["urldedupd_api_requests_total"].GetMetric() {
		var code, endpoint string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "code":
				code = l.GetValue()
			case "endpoint":
				endpoint = l.GetValue()
			}
		}
		if endpoint == "check" {
			counts[code] += m.GetCounter().GetValue()
		}
	}
	return counts
}

func newServeState(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	return dir
}

// 16 clients each start a 32 MiB − 1 upload, send all but its last byte
// and stall. With the default --max-inflight-bytes (80 MiB, 64 MiB of it
// open to big requests) two are read, fourteen are answered 503 with
// Retry-After, and the two end in 408 at
// --body-timeout. serve's RssAnon stays near the cap, normal requests are
// answered meanwhile, and the memory is returned when the uploads end.
func TestServeStalledUploads(t *testing.T) {
	t.Parallel()
	dir := newServeState(t)
	cmd, sock := serve(t, dir, "--body-timeout", "3s")
	pid := cmd.Process.Pid
	base := rssAnon(t, pid)
	peak := peakRSS(t, pid)
	h := hostile(t, "stall", "--addr", sock, "--conns", "16", "--size", strconv.Itoa(32<<20-1), "--duration", "20")
	stopProbe := probe(t, sock)
	res := h.result(t)
	fails, slowest := stopProbe()
	top := peak()
	t.Logf("RssAnon %d MiB before, peak %d MiB; %+v; slowest normal request %v", base>>20, top>>20, res, slowest)
	if res.Status["503"] != 14 || res.Status["408"] != 2 || res.Closed != 16 {
		t.Errorf("stalled uploads: %+v; want 14 × 503, 2 × 408, all closed", res)
	}
	if top > base+96<<20 {
		t.Errorf("peak RssAnon %d MiB, over the 64 MiB big uploads may hold + 32 MiB", top>>20)
	}
	if len(fails) > 0 || slowest > 4*time.Second {
		t.Errorf("normal requests meanwhile: %d failed (%v), slowest %v", len(fails), fails, slowest)
	}
	for i := 0; ; i++ {
		if rss := rssAnon(t, pid); rss < base+16<<20 {
			break
		} else if i == 50 {
			t.Fatalf("RssAnon still %d MiB 5 s after the uploads ended (%d MiB before)", rss>>20, base>>20)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if c := apiCounts(t, sock); c["503"] != 14 || c["408"] != 2 {
		t.Errorf("api_requests_total by code: %v", c)
	}
}

// A smaller --max-inflight-bytes also caps one body, at four fifths of
// it (the rest is kept in shares per connection): a larger upload is
// 413 before any of it is read (curl sends Expect: 100-continue and gets
// the answer instead of the go-ahead).
func TestServeInflightCapsBody(t *testing.T) {
	t.Parallel()
	dir := newServeState(t)
	_, sock := serve(t, dir, "--max-inflight-bytes", "1000000")
	big := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("http://big.example/x\n", 60000)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("curl", "-sS", "--max-time", "10", "--unix-socket", sock, "-w", "%{http_code}", "--data-binary", "@"+big, "http://x/v1/check").Output()
	if err != nil || !strings.HasPrefix(string(out), "error: body of 1260000 bytes, over the limit of 800000") || !strings.HasSuffix(string(out), "413") {
		t.Fatalf("curl: %q %v", out, err)
	}
}

// inflightBytes reads urldedupd_api_inflight_bytes from /metrics.
func inflightBytes(t *testing.T, c *http.Client) int64 {
	t.Helper()
	resp, err := c.Get("http://urldedupd/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "urldedupd_api_inflight_bytes "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int64(f)
		}
	}
	t.Fatal("no urldedupd_api_inflight_bytes in /metrics")
	return 0
}

// Stalled chunked uploads of 0.9 MiB, more than --max-inflight-bytes
// holds, do not shut small requests out (issue 19, item 9: 80 of them
// filled the default 80 MiB and an 18-byte batch got 503 until
// --body-timeout). With 10 MiB and --max-conns 64, each connection's share
// is 32 KiB of the reserved fifth; the uploads share the other 8 MiB, so 8
// hold 1 MiB and the rest are refused 503, while small batches, with a
// length or chunked, are answered at once.
func TestServeStalledChunkedUploadsLimit(t *testing.T) {
	t.Parallel()
	dir := newServeState(t)
	_, sock := serve(t, dir, "--max-inflight-bytes", strconv.Itoa(10<<20), "--max-conns", "64", "--body-timeout", "1m")
	metrics := unixClient(sock)
	line := "http://stalled.example/" + strings.Repeat("a", 40) + "\n" // 64 bytes
	held, refused := 0, 0
	var conns []net.Conn
	for i := range 12 {
		before := inflightBytes(t, metrics)
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		t.Cleanup(func() { c.Close() })
		answered := make(chan string, 1)
		go func() {
			// A refused upload is cut off before all of it is written:
			// the write's error is expected, the answer is what counts.
			fmt.Fprintf(c, "POST /v1/check HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n", 1<<20)
			c.Write([]byte(strings.Repeat(line, (900<<10)/len(line))))
		}()
		go func() {
			defer close(answered)
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				var b strings.Builder
				_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
				answered <- fmt.Sprintf("%d %s", resp.StatusCode, b.String())
			}
		}()
	wait: // until it holds 1 MiB (the last of its doubling charges) or is answered
		for j := 0; ; j++ {
			select {
			case msg := <-answered:
				if !strings.HasPrefix(msg, "503 ") {
					t.Fatalf("upload %d answered %q", i, msg)
				}
				if !strings.Contains(msg, "beyond its own 32768, a request shares 8388608") { // the share follows --max-conns
					t.Errorf("upload %d refused with %q", i, msg)
				}
				refused++
				break wait
			default:
			}
			if inflightBytes(t, metrics) == before+1<<20 {
				held++
				break
			}
			if j == 600 {
				t.Fatalf("upload %d neither holds 1 MiB nor is answered after 60 s", i)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("%d uploads hold %d bytes, %d refused", held, inflightBytes(t, metrics), refused)
	client := unixClient(sock)
	if code, body := post(t, client, "/v1/check", "http://small.example/\n"); code != 200 || body != "new\n" {
		t.Errorf("small batch while stalled uploads hold the budget: %d %q", code, body)
	}
	resp, err := client.Post("http://urldedupd/v1/check", "text/plain", io.MultiReader(strings.NewReader("http://small.example/\nhttp://small.example/b\n")))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "dup\nnew\n" {
		t.Errorf("small chunked batch while stalled uploads hold the budget: %d %q", resp.StatusCode, b)
	}
	if held != 8 || refused != 4 {
		t.Errorf("%d uploads held, %d refused; want 8 and 4", held, refused)
	}
	for _, c := range conns {
		c.Close()
	}
	for i := 0; inflightBytes(t, metrics) != 0; i++ {
		if i == 300 {
			t.Fatalf("%d bytes still in flight 30 s after the uploads closed", inflightBytes(t, metrics))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// 200 clients send a body at 1 byte a second: with --body-timeout 2s all
// are answered 408 and closed within the bound, and normal requests are
// answered meanwhile.
func TestServeBodySlowloris(t *testing.T) {
	t.Parallel()
	dir := newServeState(t)
	_, sock := serve(t, dir, "--body-timeout", "2s")
	stopProbe := probe(t, sock)
	h := hostile(t, "slowloris", "--addr", sock, "--conns", "200", "--size", "1000", "--duration", "15")
	res := h.result(t)
	fails, slowest := stopProbe()
	t.Logf("%+v; slowest normal request %v", res, slowest)
	if res.Status["408"] != 200 || res.Closed != 200 || res.MaxClose > 10 { // the clients would go on 15 s
		t.Errorf("slowloris: %+v; want 200 × 408, all closed within 10 s", res)
	}
	if len(fails) > 0 || slowest > 10*time.Second {
		t.Errorf("normal requests meanwhile: %d failed (%v), slowest %v", len(fails), fails, slowest)
	}
	if c := apiCounts(t, sock); c["408"] != 200 {
		t.Errorf("api_requests_total by code: %v", c)
	}
}

// 2,000 connections that send nothing, 200 that send a request's head at 1
// byte a second, and 2,000 that send one request and stay open are closed
// at --header-timeout and --idle-timeout (--max-conns is raised to serve
// them all at once); serve's
// memory stays small, normal requests are answered meanwhile, and what the
// connections took is given back within seconds of their end.
func TestServeIdleConnections(t *testing.T) {
	t.Parallel()
	dir := newServeState(t)
	cmd, sock := serve(t, dir, "--header-timeout", "2s", "--idle-timeout", "2s", "--max-conns", "5000")
	base := rssAnon(t, cmd.Process.Pid)
	peak := peakRSS(t, cmd.Process.Pid)
	stopProbe := probe(t, sock)
	silent := hostile(t, "idle", "--addr", sock, "--conns", "2000", "--duration", "20")
	slowHead := hostile(t, "headers", "--addr", sock, "--conns", "200", "--duration", "20")
	kept := hostile(t, "idle", "--request", "--addr", sock, "--conns", "2000", "--duration", "20")
	rs, rh, rk := silent.result(t), slowHead.result(t), kept.result(t)
	fails, slowest := stopProbe()
	top := peak()
	t.Logf("silent %+v; slow heads %+v; kept alive %+v; RssAnon %d MiB, peak %d MiB; slowest normal request %v", rs, rh, rk, base>>20, top>>20, slowest)
	if rs.Closed != 2000 || rs.MaxClose > 6 || rh.Closed != 200 || rh.MaxClose > 6 || rk.Closed != 2000 || rk.MaxClose > 10 {
		t.Errorf("not all closed in time: silent %+v, slow heads %+v, kept alive %+v", rs, rh, rk)
	}
	if top > base+128<<20 { // measured 62 MiB; the bound for all of serve is 256
		t.Errorf("peak RssAnon %d MiB with 4,000 connections", top>>20)
	}
	if len(fails) > 0 || slowest > 4*time.Second {
		t.Errorf("normal requests meanwhile: %d failed (%v), slowest %v", len(fails), fails, slowest)
	}
	// Back to near where it started: at most a quarter of the way to the
	// peak, and never more than 16 MiB over the start (Go's own scavenger
	// would take minutes).
	limit := base + min(16<<20, (top-base)/4)
	for i := 0; ; i++ {
		if rss := rssAnon(t, cmd.Process.Pid); rss <= limit {
			t.Logf("RssAnon back to %d MiB %.1f s after the connections closed", rss>>20, float64(i)/10)
			break
		} else if i == 120 {
			t.Fatalf("RssAnon still %d MiB 12 s after the connections closed (%d MiB before, peak %d MiB)", rss>>20, base>>20, top>>20)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SIGTERM while slow clients send bodies or heads, silent connections wait
// and kept-alive ones idle: serve answers the bodies 503, closes the rest
// and exits 0 within 10 s (it takes well under 1 s; the margin is for a
// loaded machine: what is asserted is that it does not wait for them).
func TestServeSIGTERMSlowClients(t *testing.T) {
	t.Parallel()
	dir := newServeState(t)
	cmd, sock := serve(t, dir)
	slow := hostile(t, "slowloris", "--addr", sock, "--conns", "200", "--duration", "20")
	silent := hostile(t, "idle", "--addr", sock, "--conns", "200", "--duration", "20")
	kept := hostile(t, "idle", "--request", "--addr", sock, "--conns", "200", "--duration", "20")
	heads := hostile(t, "headers", "--addr", sock, "--conns", "200", "--duration", "20")
	time.Sleep(1500 * time.Millisecond) // a byte of each body sent
	start := time.Now()
	stopServeWithin(t, cmd, 30*time.Second)
	took := time.Since(start)
	r1, r2, r3, r4 := slow.result(t), silent.result(t), kept.result(t), heads.result(t)
	t.Logf("exited 0 %v after SIGTERM; slowloris %+v; silent %+v; kept alive %+v; slow heads %+v", took, r1, r2, r3, r4)
	if took > 10*time.Second { // the clients would keep it 20 s
		t.Errorf("serve took %v to exit", took)
	}
	if r1.Status["503"] != 200 || r1.Closed != 200 || r2.Closed != 200 || r3.Closed != 200 || r4.Closed != 200 {
		t.Errorf("slow clients not answered 503 and closed: %+v %+v %+v %+v", r1, r2, r3, r4)
	}
}

// A request head is capped at 256 KiB: room for a GET of a 60 KiB URL
// percent-encoded whole, and 431 beyond.
func TestServeHeaderCap(t *testing.T) {
	t.Parallel()
	dir := newServeState(t)
	_, sock := serve(t, dir)
	c := unixClient(sock)
	var enc strings.Builder
	for range 60 << 10 {
		enc.WriteString("%41")
	}
	resp, err := c.Get("http://urldedupd/v1/check?url=http://a.example/" + enc.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET of a 180 KiB encoded URL: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", "http://urldedupd/healthz", nil)
	req.Header.Set("X-Pad", strings.Repeat("x", 300<<10))
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("300 KiB head: %d, want 431", resp.StatusCode)
	}
}

// A request still being decided at SIGTERM gets --shutdown-grace, then its
// connection is closed and serve exits 0: here Redis is stopped (SIGSTOP)
// under a batch, which would otherwise wait for --redis-timeout.
func TestServeShutdownGrace(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	addr, _, _ := redisServer(t, tmp)
	backend := "redis://" + addr + "/0"
	if _, stderr, code := run(t, nil, "--backend", backend, "init"); code != 0 {
		t.Fatal(stderr)
	}
	sock := filepath.Join(tmp, "api.sock")
	cmd := exec.Command(binary, "--backend", backend, "--redis-timeout", "60s", "serve", "--socket", sock, "--log-format", "json", "--shutdown-grace", "1s")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	background(t, cmd)
	for i := 0; ; i++ {
		if c, err := unixClient(sock).Get("http://urldedupd/healthz"); err == nil {
			c.Body.Close()
			break
		}
		if i == 200 {
			t.Fatal("serve did not open its socket")
		}
		time.Sleep(50 * time.Millisecond)
	}
	info, err := exec.Command("redis-cli", "-p", addr[strings.LastIndex(addr, ":")+1:], "info", "server").Output()
	if err != nil {
		t.Fatal(err)
	}
	var redisPid int
	for _, l := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "process_id:"); ok {
			redisPid, _ = strconv.Atoi(v)
		}
	}
	if redisPid == 0 {
		t.Fatalf("no process_id in %q", info)
	}
	syscall.Kill(redisPid, syscall.SIGSTOP)
	t.Cleanup(func() { syscall.Kill(redisPid, syscall.SIGCONT) })
	answered := make(chan error, 1)
	go func() {
		resp, err := unixClient(sock).Post("http://urldedupd/v1/check", "text/plain", strings.NewReader("http://grace.example/\n"))
		if err == nil {
			err = fmt.Errorf("answered %d", resp.StatusCode)
			resp.Body.Close()
		}
		answered <- err
	}()
	time.Sleep(500 * time.Millisecond) // the batch is waiting for Redis
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exit after SIGTERM: %v; %s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not exit within 30 s of SIGTERM")
	}
	took := time.Since(start)
	t.Logf("exited 0 %v after SIGTERM", took)
	if took < time.Second || took > 10*time.Second { // not before the grace; a busy machine may take long after it
		t.Errorf("serve exited %v after SIGTERM; want the 1 s grace, then at once", took)
	}
	select {
	case err := <-answered:
		t.Logf("the client: %v", err)
	case <-time.After(5 * time.Second):
		t.Error("the client's connection was not closed")
	}
	if !strings.Contains(stderr.String(), "closing API connections still open after the shutdown grace") {
		t.Errorf("no warning in the log: %s", stderr.String())
	}
}
