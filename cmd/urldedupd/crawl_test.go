package main_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// A real crawl: 3 Scrapy processes (Debian's python3-scrapy) crawl a site
// that nginx serves from a network namespace, sharing one serve
// --resp-socket through urldedupd.scrapy.DupeFilter. nginx's access log
// says what was fetched.

const (
	crawlPages = 3000 // pages besides the index
	crawlProcs = 3
	crawlPort  = 8080
)

// writeSite writes the index and crawlPages pages under dir: page i links
// to pages 3i+1, 3i+2 and 3i+3 (a tree from page 0, so that every page is
// reachable) and to two others spread over the site, some of the links
// with a fragment (the same request to Scrapy). The index links to pages
// 0-9; no page links back to it.
func writeSite(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	page := func(name string, links []int) {
		var b bytes.Buffer
		fmt.Fprintf(&b, "<!doctype html><html><head><title>%s</title></head><body>\n", name)
		for j, l := range links {
			frag := ""
			if j == len(links)-1 && l%5 == 0 {
				frag = "#part"
			}
			fmt.Fprintf(&b, "<p><a href=\"/p/%d.html%s\">page %d</a></p>\n", l, frag, l)
		}
		b.WriteString("</body></html>\n")
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	page("index.html", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	for i := range crawlPages {
		var links []int
		for c := 3*i + 1; c <= 3*i+3 && c < crawlPages; c++ {
			links = append(links, c)
		}
		links = append(links, (i*7919+13)%crawlPages, (i*104729+7)%crawlPages)
		page(fmt.Sprintf("p/%d.html", i), links)
	}
}

// startNginx runs nginx in the namespace ns on ServerAddr:crawlPort with
// root site, one process in the foreground (killed by pid when the test
// ends), logging each request as "METHOD URI STATUS USER-AGENT" to the
// file it returns.
func startNginx(t *testing.T, ns, site string) string {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	conf := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 1024; }
http {
  log_format crawl '$request_method $uri $status $http_user_agent';
  access_log %[2]s crawl;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  types { text/html html; }
  server {
    listen %[3]s:%[4]d;
    root %[5]s;
  }
}
`, dir, log, nettest.ServerAddr, crawlPort, site)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	nettest.Start(t, ns, "nginx", "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	nettest.WaitListen(t, ns, crawlPort)
	return log
}

// serveRESPSocket starts serve on dir with the RESP front end on the Unix
// socket sock, and waits, bounded, until it answers there.
func serveRESPSocket(t *testing.T, dir, sock string) *exec.Cmd {
	t.Helper()
	cmd, _ := serve(t, dir, "--events", os.DevNull, "--resp-socket", sock)
	for i := 0; ; i++ {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return cmd
		}
		if i == 200 {
			t.Fatal("serve did not listen on --resp-socket")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// crawl runs crawlProcs Scrapy processes in the namespace ns at once (each
// waits for the others to be ready), all starting at the index, with the
// dupefilter on serve's socket sock, and waits, bounded, for them to end.
// Process k sends the user agent "crawler-<run>-<k>". It fails the test
// unless each finished on its own (no error, no timeout).
func crawl(t *testing.T, ns, sock string, run int) {
	t.Helper()
	spider, err := filepath.Abs("testdata/crawl_spider.py")
	if err != nil {
		t.Fatal(err)
	}
	client, err := filepath.Abs(pythonClient)
	if err != nil {
		t.Fatal(err)
	}
	barrier := t.TempDir()
	start := fmt.Sprintf("http://%s:%d/index.html", nettest.ServerAddr, crawlPort)
	cmds := make([]*exec.Cmd, crawlProcs)
	logs := make([]*bytes.Buffer, crawlProcs)
	for k := range crawlProcs {
		args := []string{pyRedis, "-m", "scrapy", "runspider", spider,
			"-a", "start=" + start, "-a", fmt.Sprintf("seed=%d", k), "-a", "barrier=" + barrier}
		for _, s := range []string{
			"DUPEFILTER_CLASS=urldedupd.scrapy.DupeFilter",
			"URLDEDUPD_URL=unix://" + sock,
			"URLDEDUPD_KEY=crawl-test",
			fmt.Sprintf("USER_AGENT=crawler-%d-%d", run, k),
			"RETRY_ENABLED=False", // a retry skips the filter: it would fetch twice
			"ROBOTSTXT_OBEY=False",
			"TELNETCONSOLE_ENABLED=False",
			"CLOSESPIDER_TIMEOUT=600",
			"LOG_LEVEL=INFO",
		} {
			args = append(args, "-s", s)
		}
		cmd := nettest.Command(ns, args...)
		cmd.Dir = barrier // no scrapy.cfg of a project here
		cmd.Env = pythonEnv(client)
		logs[k] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = logs[k], logs[k]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
		cmds[k] = cmd
	}
	// All ready (Scrapy imported, the filter open), then all go at once.
	for i := 0; ; i++ {
		ready, _ := filepath.Glob(filepath.Join(barrier, "ready-*"))
		if len(ready) == crawlProcs {
			break
		}
		if i == 3000 {
			t.Fatalf("%d of %d crawlers ready after 5 minutes", len(ready), crawlProcs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(barrier, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, crawlProcs)
	for k, cmd := range cmds {
		go func() { cmd.Wait(); done <- k }()
	}
	limit := time.After(15 * time.Minute)
	for range crawlProcs {
		select {
		case <-done:
		case <-limit:
			t.Fatal("the crawlers did not end within 15 minutes")
		}
	}
	for k, cmd := range cmds {
		out := logs[k].String()
		if !cmd.ProcessState.Success() || !strings.Contains(out, "'finish_reason': 'finished'") ||
			strings.Contains(out, "Traceback") {
			t.Fatalf("crawler %d: %v\n%s", k, cmd.ProcessState, out)
		}
	}
}

// fetched reads the access log from byte offset from on, and returns the
// count of each URI fetched and, by user agent, the fetches. Any status but
// 200 or a method but GET fails the test.
func fetched(t *testing.T, log string, from int) (map[string]int, map[string]int) {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	uris, agents := map[string]int{}, map[string]int{}
	line := regexp.MustCompile(`^(\S+) (\S+) (\d+) (\S+)$`)
	for _, l := range strings.Split(strings.TrimSpace(string(data[from:])), "\n") {
		if l == "" {
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil || m[1] != "GET" || m[3] != "200" {
			t.Fatalf("access log: %q", l)
		}
		uris[m[2]]++
		agents[m[4]]++
	}
	return uris, agents
}

// Each page fetched exactly once across 3 Scrapy processes sharing one
// serve; then, after serve restarts on the same state, a second crawl
// fetches nothing but the start page (which each process requests past
// the filter, as Scrapy does with start URLs).
func TestCrawl(t *testing.T) {
	t.Parallel()
	needScrapy(t)
	if _, err := exec.LookPath("nginx"); err != nil {
		t.Skip("nginx not installed (scripts/install-deps.sh)")
	}
	srv, cli, _ := nettest.Veth(t) // skips without root
	tmp := t.TempDir()
	site := filepath.Join(tmp, "site")
	writeSite(t, site)
	log := startNginx(t, srv, site)

	state := filepath.Join(tmp, "state")
	if _, stderr, code := run(t, nil, "--dir", state, "init"); code != 0 {
		t.Fatal(stderr)
	}
	sock := filepath.Join(tmp, "resp.sock")
	server := serveRESPSocket(t, state, sock)

	begin := time.Now()
	crawl(t, cli, sock, 1)
	took := time.Since(begin)
	uris, agents := fetched(t, log, 0)
	var lost, twice []string
	for i := range crawlPages {
		uri := fmt.Sprintf("/p/%d.html", i)
		switch n := uris[uri]; {
		case n == 0:
			lost = append(lost, uri)
		case n > 1:
			twice = append(twice, fmt.Sprintf("%s x%d", uri, n))
		}
		delete(uris, uri)
	}
	if n := uris["/index.html"]; n != crawlProcs {
		t.Errorf("the start page fetched %d times, want once by each of %d crawlers", n, crawlProcs)
	}
	delete(uris, "/index.html")
	if len(lost) > 0 || len(twice) > 0 || len(uris) > 0 {
		t.Fatalf("of %d pages: %d never fetched %q, %d fetched more than once %q; fetched but not in the site: %v",
			crawlPages, len(lost), lost[:min(10, len(lost))], len(twice), twice[:min(10, len(twice))], uris)
	}
	t.Logf("first crawl: %d pages, each fetched once, in %v; fetches by crawler: %v", crawlPages, took.Round(time.Millisecond), agents)

	// serve restarts on the same state: nothing fetched is fetched again.
	stopServe(t, server)
	serveRESPSocket(t, state, sock)
	offset, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	crawl(t, cli, sock, 2)
	uris, agents = fetched(t, log, int(offset.Size()))
	if len(uris) != 1 || uris["/index.html"] != crawlProcs {
		t.Fatalf("second crawl after a restart fetched %v, want only /index.html, once by each of %d crawlers", uris, crawlProcs)
	}
	t.Logf("second crawl: only the start page, by crawler: %v", agents)
}
