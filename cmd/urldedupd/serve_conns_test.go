package main_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// gauge reads one unlabelled metric from serve's /metrics over a
// connection that is closed afterwards (a kept-alive one would hold one of
// --max-conns).
func gauge(t *testing.T, sock, name string) float64 {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
	resp, err := c.Get("http://urldedupd/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ms := fams[name].GetMetric()
	if len(ms) != 1 {
		t.Fatalf("metric %s: %v", name, ms)
	}
	if g := ms[0].GetGauge(); g != nil {
		return g.GetValue()
	}
	return ms[0].GetCounter().GetValue()
}

// openFDs counts a process's open file descriptors.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// With --max-conns 40, 20 silent connections over TCP and 20 over the
// socket take every slot: the gauge counts them across the listeners, and
// a normal request waits in the backlog until --header-timeout closes
// them, then is answered. 400 connections each sending a 250,000-byte head
// then hold at most 40 heads at once (without the cap: 400, over 200 MiB).
func TestServeMaxConns(t *testing.T) {
	t.Parallel()
	// The header timeout is long enough that the two hostile clients'
	// connections are all open at once even when starting the second takes
	// seconds on a loaded machine (with 3 s, the first 20 were closed
	// before the second 20 connected: the gauge read 20).
	const maxConns, headerTimeout = 40, 8 * time.Second
	dir := newServeState(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd, sock := serve(t, dir, "--max-conns", fmt.Sprint(maxConns), "--header-timeout", headerTimeout.String(), "--listen", addr)
	pid := cmd.Process.Pid
	for i := 0; ; i++ {
		if g := gauge(t, sock, "urldedupd_api_connections"); g == 1 {
			break
		} else if i == 100 {
			t.Fatalf("urldedupd_api_connections %v with only the scrape open; want 1", g)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The descriptors serve holds with no connection: the scrape's is
	// closed once two counts 100 ms apart agree.
	fds := openFDs(t, pid)
	for i := 0; ; i++ {
		time.Sleep(100 * time.Millisecond)
		if n := openFDs(t, pid); n == fds {
			break
		} else if i == 50 {
			t.Fatalf("serve's descriptors do not settle: %d, then %d", fds, n)
		} else {
			fds = n
		}
	}

	held := time.Now()
	tcp := hostile(t, "idle", "--addr", addr, "--conns", fmt.Sprint(maxConns/2), "--duration", "30")
	unix := hostile(t, "idle", "--addr", sock, "--conns", fmt.Sprint(maxConns/2-1), "--duration", "30")
	for i := 0; ; i++ {
		if g := gauge(t, sock, "urldedupd_api_connections"); g == maxConns {
			break
		} else if i == 100 {
			t.Fatalf("urldedupd_api_connections %v with %d silent connections and the scrape; want %d", g, maxConns-1, maxConns)
		}
		time.Sleep(20 * time.Millisecond)
	}
	last := hostile(t, "idle", "--addr", sock, "--conns", "1", "--duration", "30")
	for i := 0; openFDs(t, pid) != fds+maxConns; i++ {
		if i == 250 {
			t.Fatalf("serve has %d descriptors, want %d: the %dth connection was not accepted", openFDs(t, pid), fds+maxConns, maxConns)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// At the cap: the request waits for a slot, which the header timeout
	// frees no sooner than headerTimeout after the silent connections
	// connected.
	out, err := exec.Command("curl", "-sS", "--max-time", "60", "--unix-socket", sock, "-w", " %{http_code}",
		"http://x/v1/check?url="+"http://capped.example/").Output()
	answered := time.Since(held)
	t.Logf("request at the cap answered %v after the silent connections connected: %q %v", answered, out, err)
	if err != nil || string(out) != "new\n 200" {
		t.Fatalf("request at the cap: %q %v", out, err)
	}
	if answered < headerTimeout || answered > headerTimeout+30*time.Second {
		t.Errorf("request at the cap answered %v after %d silent connections took every slot; want after their %v header timeout, within 30 s of it",
			answered, maxConns, headerTimeout)
	}
	for _, h := range []*hostileRun{tcp, unix, last} {
		if r := h.result(t); r.Closed != r.Conns {
			t.Errorf("silent connections not all closed: %+v", r)
		}
	}
	if w := gauge(t, sock, "urldedupd_api_connection_waits_total"); w < 1 {
		t.Errorf("urldedupd_api_connection_waits_total %v after a wait at the cap", w)
	}

	// Maximal slow heads: only maxConns of them are read at once.
	base := rssAnon(t, pid)
	peak := peakRSS(t, pid)
	heads := hostile(t, "headers", "--addr", sock, "--conns", "400", "--head-size", "250000", "--duration", fmt.Sprint(int(headerTimeout.Seconds())+5))
	res := heads.result(t)
	top := peak()
	t.Logf("400 heads of 250,000 bytes: %+v; RssAnon %d MiB before, peak %d MiB", res, base>>20, top>>20)
	if top > base+96<<20 {
		t.Errorf("peak RssAnon %d MiB over %d MiB before, with %d heads of 250,000 bytes read at once at most", top>>20, base>>20, maxConns)
	}
	if res.Closed < maxConns {
		t.Errorf("slow heads: %+v; want at least the first %d closed by the header timeout", res, maxConns)
	}
	out, err = exec.Command("curl", "-sS", "--max-time", "20", "--unix-socket", sock, "http://x/healthz").Output()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("healthz after the heads: %q %v", out, err)
	}
}
