package main_test

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// serve starts `urldedupd serve` on state dir with extra flags and waits,
// bounded, for its socket. It is killed by pid when the test ends.
func serve(t *testing.T, dir string, extra ...string) (*exec.Cmd, string) {
	return serveIn(t, nil, dir, extra...)
}

// serveIn is serve run under a command prefix (such as ip netns exec NS).
func serveIn(t *testing.T, prefix []string, dir string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	return serveLogging(t, os.Stderr, prefix, dir, extra...)
}

// serveLogging is serveIn with serve's log going to stderr. A --socket in
// extra is the socket waited for.
func serveLogging(t *testing.T, stderr io.Writer, prefix []string, dir string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	sock := filepath.Join(dir, "api.sock")
	if i := slices.Index(extra, "--socket"); i >= 0 && i+1 < len(extra) {
		sock = extra[i+1]
	}
	args := append(append(append([]string{}, prefix...), binary, "--dir", dir, "serve", "--log-format", "json"), extra...)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	waitDial(t, "unix", sock, 10*time.Second, "serve did not open its socket")
	return cmd, sock
}

// waitDial waits, at most limit, until addr takes a connection; else the
// test fails saying why.
func waitDial(t *testing.T, network, addr string, limit time.Duration, why string) {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial(network, addr); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(why)
		}
	}
}

func unixClient(sock string) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxConnsPerHost: 1,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
}

func post(t *testing.T, c *http.Client, path, body string) (int, string) {
	resp, err := c.Post("http://urldedupd"+path, "text/plain", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func apiURL(i int) string { return fmt.Sprintf("http://shared.example/item/%d", i) }

// 8 API connections post 100 batches of 1,000 URLs while a filter process
// works on an overlapping list against the same state: every distinct
// signature is reported new exactly once across both.
func TestServeExactlyOnceWithFilter(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	_, sock := serve(t, dir)

	var filterIn strings.Builder
	for i := 50_000; i < 150_000; i++ {
		filterIn.WriteString(apiURL(i) + "\n")
	}
	filter := exec.Command(binary, "--dir", dir, "filter")
	filter.Stdin = strings.NewReader(filterIn.String())
	var filterOut strings.Builder
	filter.Stdout = &filterOut
	if err := filter.Start(); err != nil {
		t.Fatal(err)
	}

	newCount := map[uint32]int{}
	var mu sync.Mutex
	batches := make(chan int, 100)
	for b := range 100 {
		batches <- b
	}
	close(batches)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := unixClient(sock)
			for b := range batches {
				var body strings.Builder
				for i := b * 1000; i < (b+1)*1000; i++ {
					body.WriteString(apiURL(i) + "\n")
				}
				code, resp := post(t, c, "/v1/check", body.String())
				verdicts := strings.Split(strings.TrimSpace(resp), "\n")
				if code != 200 || len(verdicts) != 1000 {
					t.Errorf("batch %d: %d, %d verdicts", b, code, len(verdicts))
					return
				}
				mu.Lock()
				for k, v := range verdicts {
					if v == "new" {
						newCount[crc32.ChecksumIEEE([]byte(apiURL(b*1000+k)))]++
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := filter.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(filterOut.String()), "\n") {
		newCount[crc32.ChecksumIEEE([]byte(l))]++
	}
	want := map[uint32]bool{}
	for i := range 150_000 {
		want[crc32.ChecksumIEEE([]byte(apiURL(i)))] = true
	}
	for sig, n := range newCount {
		if n != 1 || !want[sig] {
			t.Fatalf("signature %08x reported new %d times", sig, n)
		}
	}
	if len(newCount) != len(want) {
		t.Fatalf("%d signatures reported new, want %d", len(newCount), len(want))
	}

	// The metrics parse and agree with what was sent.
	resp, err := unixClient(sock).Get("http://urldedupd/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("metrics do not parse: %v", err)
	}
	urls := map[string]float64{}
	for _, m := range fams["urldedupd_api_urls_total"].GetMetric() {
		urls[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
	}
	apiNew := 0
	for _, n := range newCount {
		apiNew += n
	}
	apiNew -= len(strings.Split(strings.TrimSpace(filterOut.String()), "\n"))
	if urls["new"] != float64(apiNew) || urls["new"]+urls["dup"] != 100_000 {
		t.Fatalf("urls_total %v; the API answered %d new of 100,000", urls, apiNew)
	}
	var checks float64
	for _, m := range fams["urldedupd_api_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "endpoint" && l.GetValue() == "check" {
				checks += m.GetCounter().GetValue()
			}
		}
	}
	if checks != 100 {
		t.Fatalf("api_requests_total for check = %v, want 100", checks)
	}
	if fams["urldedupd_bits_set"] == nil || fams["urldedupd_api_request_duration_seconds"] == nil {
		t.Fatal("fill or latency metrics missing")
	}
}

// SIGTERM while batches are in flight: exit 0 within a bounded time, and
// every URL answered new before the signal is dup after a restart.
func TestServeSIGTERMUnderLoad(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}
	cmd, sock := serve(t, dir)
	var mu sync.Mutex
	var answeredNew []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := unixClient(sock)
			for b := 0; b < 10_000; b++ {
				select {
				case <-stop:
					return
				default:
				}
				var body strings.Builder
				var urls []string
				for i := range 500 {
					u := fmt.Sprintf("http://term.example/%d/%d/%d", w, b, i)
					urls = append(urls, u)
					body.WriteString(u + "\n")
				}
				resp, err := c.Post("http://urldedupd/v1/check", "text/plain", strings.NewReader(body.String()))
				if err != nil {
					return // the server went away: expected after SIGTERM
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				verdicts := strings.Split(strings.TrimSpace(string(b)), "\n")
				if resp.StatusCode != 200 || len(verdicts) != len(urls) {
					return
				}
				mu.Lock()
				for k, v := range verdicts {
					if v == "new" {
						answeredNew = append(answeredNew, urls[k])
					}
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(700 * time.Millisecond)
	start := time.Now()
	stopServe(t, cmd)
	close(stop)
	wg.Wait()
	t.Logf("exited %v after SIGTERM; %d URLs answered new before", time.Since(start).Round(time.Millisecond), len(answeredNew))
	if len(answeredNew) == 0 {
		t.Fatal("no batch answered before SIGTERM")
	}
	_, sock = serve(t, dir)
	c := unixClient(sock)
	for i := 0; i < len(answeredNew); i += 10_000 {
		part := answeredNew[i:min(i+10_000, len(answeredNew))]
		code, resp := post(t, c, "/v1/check?dry_run=1", strings.Join(part, "\n")+"\n")
		if code != 200 || strings.Contains(resp, "new") {
			t.Fatalf("after restart: %d, a URL answered new before SIGTERM is new again", code)
		}
	}
}

// Malformed input over the real socket gets its 4xx, and the daemon keeps
// serving.
func TestServeBadInput(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	_, sock := serve(t, dir, "--max-batch", "10")
	c := unixClient(sock)
	for _, tc := range []struct {
		ctype, body string
		code        int
	}{
		{"application/json", "[nope", 400},
		{"text/plain", "", 400},
		{"text/plain", "http://a/\xff\n", 400},
		{"text/plain", strings.Repeat("http://a/\n", 11), 413},
		{"text/plain", "http://a/" + strings.Repeat("x", 70_000), 400},
		{"image/png", "x", 415},
	} {
		resp, err := c.Post("http://urldedupd/v1/check", tc.ctype, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.HasPrefix(string(b), "error: ") {
			t.Errorf("%s %q: %d %q; want %d", tc.ctype, tc.body[:min(20, len(tc.body))], resp.StatusCode, b, tc.code)
		}
	}
	if code, body := post(t, c, "/v1/check", "http://fine.example/\n"); code != 200 || body != "new\n" {
		t.Fatalf("after bad input: %d %q", code, body)
	}
	resp, err := c.Get("http://urldedupd/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v", err)
	}
	resp.Body.Close()
}

// stopServe sends SIGTERM and waits, bounded, for exit code 0.
func stopServe(t *testing.T, cmd *exec.Cmd) { stopServeWithin(t, cmd, 15*time.Second) }

// stopServeWithin sends SIGTERM and waits up to limit for exit code 0.
func stopServeWithin(t *testing.T, cmd *exec.Cmd, limit time.Duration) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exit after SIGTERM: %v", err)
		}
	case <-time.After(limit):
		t.Fatalf("serve did not exit within %v of SIGTERM", limit)
	}
}
