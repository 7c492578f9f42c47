package main_test

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/redistest"
)

// redisServer starts a real redis-server on a free loopback port, with AOF
// (appendfsync always) in dir, and stops it by pid when the test ends. It
// returns the address and a function that starts it again on the same port
// and files.
func redisServer(t *testing.T, dir string) (addr string, stop func(), start func()) {
	t.Helper()
	p := redistest.Start(t, dir, "--appendonly", "yes", "--appendfsync", "always")
	return p.Addr, p.Kill, func() { p.Restart(t) }
}

// Four filter processes at once on overlapping inputs against one Redis:
// every distinct signature comes out exactly once.
func TestRedisFilterExactlyOnce(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	addr, _, _ := redisServer(t, tmp)
	backend := "redis://" + addr + "/0"
	distinct := filterExactlyOnce(t, 200_000, 60_000, "--backend", backend)
	// stats over Redis (BITCOUNT) counts them; check reads them.
	out, stderr, code := run(t, nil, "--backend", backend, "stats", "--json")
	if code != 0 || !strings.Contains(out, fmt.Sprintf(`"bits_set": %d,`, distinct)) {
		t.Fatalf("stats: %d %q %q", code, out[:min(len(out), 300)], stderr)
	}
	out, _, _ = run(t, nil, "--backend", backend, "check", "http://host1.example.com/path/page-1.html", "http://never.example/")
	if !strings.HasSuffix(out, "new\thttp://never.example/\n") {
		t.Fatalf("check: %q", out)
	}
	// The same bytes as a local state: one bit on disk order, checked with
	// GETRANGE against the file layout (bit b of the shard is bit b%8 of
	// byte b/8, least significant first).
	sig := crc32.ChecksumIEEE([]byte("http://never.example/"))
	if _, _, code := run(t, strings.NewReader("http://never.example/\n"), "--backend", backend, "filter"); code != 0 {
		t.Fatal("filter")
	}
	bit := sig & 0xffffff
	raw, err := exec.Command("redis-cli", "-h", strings.Split(addr, ":")[0], "-p", strings.Split(addr, ":")[1],
		"--no-raw", "GETRANGE", fmt.Sprintf("urldedupd:%02x", sig>>24), fmt.Sprint(bit/8), fmt.Sprint(bit/8)).Output()
	if err != nil {
		t.Fatal(err)
	}
	var b byte
	if s := strings.TrimSpace(string(raw)); strings.HasPrefix(s, `"\x`) {
		fmt.Sscanf(s[3:5], "%02x", &b)
	} else if len(s) == 3 {
		b = s[1]
	}
	if b&(1<<(bit%8)) == 0 {
		t.Fatalf("byte %d of urldedupd:%02x is %q: bit %d not set LSB-first", bit/8, sig>>24, raw, bit%8)
	}
}

// A format mismatch with the metadata key is refused, like the file.
func TestRedisMetaMismatch(t *testing.T) {
	t.Parallel()
	addr, _, _ := redisServer(t, t.TempDir())
	backend := "redis://" + addr + "/0"
	if out, stderr, code := run(t, nil, "--backend", backend, "init", "--normalize", "none"); code != 0 || !strings.HasPrefix(out, "ready ") {
		t.Fatalf("init: %d %q %q", code, out, stderr)
	}
	_, stderr, code := run(t, nil, "--backend", backend, "init")
	if code != 3 || !strings.Contains(stderr, "urldedupd:meta: state format differs") {
		t.Fatalf("mismatched init: %d %q", code, stderr)
	}
	if _, stderr, code := run(t, nil, "--backend", backend, "snapshot", filepath.Join(t.TempDir(), "snap")); code != 2 || !strings.Contains(stderr, "local state directories") {
		t.Fatalf("snapshot with --backend: %d %q", code, stderr)
	}
}

// Redis stopped mid-run: the default mode exits non-zero with a clear
// error, and nothing printed as new before the failure is lost once Redis
// restarts from its AOF.
func TestRedisStoppedMidRun(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	addr, stop, start := redisServer(t, tmp)
	backend := "redis://" + addr + "/0"
	cmd := exec.Command(binary, "--backend", backend, "filter")
	stdin, _ := cmd.StdinPipe()
	go func() {
		w := bufio.NewWriter(stdin)
		for i := 0; i < 2_000_000; i++ {
			if _, err := fmt.Fprintf(w, "http://redis-stop.example/%d\n", i); err != nil {
				return
			}
		}
		w.Flush()
		stdin.Close()
	}()
	got := stopRedisMidRun(t, cmd, stop, 300*time.Millisecond)
	start()
	stillSet(t, backend, got)
}

// stopRedisMidRun runs cmd, calls stop once cmd has printed a line (and a
// random pause of up to jitter after), and checks that cmd then exits with
// code 5 and "redis unavailable". It returns what cmd printed. Its waits
// (for the first line, and for the exit) are bounded generously: a loaded
// machine can take long, and what is asserted is the outcome.
func stopRedisMidRun(t *testing.T, cmd *exec.Cmd, stop func(), jitter time.Duration) []string {
	t.Helper()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	background(t, cmd)
	printed := make(chan []string, 1)
	first := make(chan struct{})
	go func() {
		var got []string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if got = append(got, sc.Text()); len(got) == 1 {
				close(first)
			}
		}
		printed <- got
	}()
	select {
	case <-first:
	case got := <-printed:
		cmd.Wait()
		t.Fatalf("ended having printed %d lines, before Redis was stopped: %s", len(got), stderr.String())
	case <-time.After(120 * time.Second):
		t.Fatal("nothing printed within 120 s")
	}
	if jitter > 0 {
		time.Sleep(time.Duration(rand.Int64N(int64(jitter))))
	}
	stop()
	got := <-printed
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(120 * time.Second):
		t.Fatal("no exit within 120 s of Redis stopping")
	}
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 5 || !strings.Contains(stderr.String(), "redis unavailable") {
		t.Fatalf("after Redis stopped: %v, stderr %q", err, stderr.String())
	}
	t.Logf("%d lines printed before Redis stopped; stderr: %s", len(got), stderr.String())
	return got
}

// stillSet checks that every URL in urls is set in the Redis state.
func stillSet(t *testing.T, backend string, urls []string) {
	t.Helper()
	out, stderr, code := run(t, strings.NewReader(strings.Join(urls, "\n")+"\n"), "--backend", backend, "filter", "--dry-run")
	if code != 0 || out != "" {
		t.Fatalf("after the restart, %d of %d URLs printed new are unknown to Redis (%s)", strings.Count(out, "\n"), len(urls), stderr)
	}
}

// setbitCalls reads Redis' count of SETBIT calls.
func setbitCalls(t *testing.T, addr string) int {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command("redis-cli", "-h", host, "-p", port, "INFO", "commandstats").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "cmdstat_setbit:calls=") {
			var n int
			fmt.Sscanf(strings.TrimPrefix(l, "cmdstat_setbit:calls="), "%d", &n)
			return n
		}
	}
	return 0
}

// With --local-cache, a stream with 70% repeats costs Redis at most one
// SETBIT per locally unseen URL, and the answers are those without the
// cache.
func TestRedisLocalCache(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	addr, _, _ := redisServer(t, tmp)
	backend := "redis://" + addr + "/0"
	rng := rand.New(rand.NewPCG(5, 5))
	var in strings.Builder
	distinct := 0
	for i := 0; i < 40_000; i++ {
		id := distinct
		if distinct > 0 && rng.Float64() < 0.7 {
			id = rng.IntN(distinct)
		} else {
			distinct++
		}
		fmt.Fprintf(&in, "http://cache.example/%d\n", id)
	}
	before := setbitCalls(t, addr)
	cached, stderr, code := run(t, strings.NewReader(in.String()), "--backend", backend, "--redis-prefix", "withcache",
		"--local-cache", filepath.Join(tmp, "cache"), "filter", "--mark")
	if code != 0 {
		t.Fatal(stderr)
	}
	calls := setbitCalls(t, addr) - before
	plain, stderr, code := run(t, strings.NewReader(in.String()), "--backend", backend, "--redis-prefix", "nocache", "filter", "--mark")
	if code != 0 {
		t.Fatal(stderr)
	}
	if cached != plain {
		t.Fatal("answers with the local cache differ from those without it")
	}
	if calls > distinct {
		t.Fatalf("%d SETBIT calls for %d locally unseen URLs", calls, distinct)
	}
	t.Logf("40,000 lines, %d distinct: %d SETBIT calls with the cache", distinct, calls)
	// A second run is answered by the cache alone.
	before = setbitCalls(t, addr)
	again, _, _ := run(t, strings.NewReader(in.String()), "--backend", backend, "--redis-prefix", "withcache",
		"--local-cache", filepath.Join(tmp, "cache"), "filter")
	if again != "" || setbitCalls(t, addr) != before {
		t.Fatalf("second run: %d bytes out, %d SETBIT calls", len(again), setbitCalls(t, addr)-before)
	}
}

// migrate moves a state from a local directory into Redis and back: the
// answers are the same on every side, and running it again changes nothing.
func TestMigrate(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	addr, _, _ := redisServer(t, tmp)
	backend := "redis://" + addr + "/0"
	local, back := filepath.Join(tmp, "local"), filepath.Join(tmp, "back")
	filterInto(t, local, urlLines("mig", 0, 30_000))
	// Redis already holds other URLs: the upload ORs, it does not replace.
	filterInto(t, "", urlLines("redis-only", 0, 5_000), "--backend", backend, "filter")

	out, stderr, code := run(t, nil, "migrate", "--from", local, "--to", backend)
	if code != 0 || !strings.Contains(out, "256 shards sent, 0 empty, 0 already done") {
		t.Fatalf("upload: %d %q %q", code, out, stderr)
	}
	out, _, code = run(t, nil, "migrate", "--from", local, "--to", backend)
	if code != 0 || !strings.Contains(out, "0 shards sent, 0 empty, 256 already done") {
		t.Fatalf("upload again: %d %q", code, out)
	}
	both := urlLines("mig", 0, 30_000) + urlLines("redis-only", 0, 5_000)
	if n, d := marksArgs(t, both, "--backend", backend); n != 0 || d != 35_000 {
		t.Fatalf("Redis after upload: %d new, %d dup", n, d)
	}
	out, stderr, code = run(t, nil, "migrate", "--from", backend, "--to", back)
	if code != 0 || !strings.Contains(out, "35000 bits added") {
		t.Fatalf("download: %d %q %q", code, out, stderr)
	}
	if n, d := marks(t, back, both); n != 0 || d != 35_000 {
		t.Fatalf("local after download: %d new, %d dup", n, d)
	}
	if n, _ := marks(t, back, urlLines("never", 0, 1000)); n != 1000 {
		t.Fatalf("downloaded state claims %d unseen URLs", 1000-n)
	}
	if _, stderr, code := run(t, nil, "migrate", "--from", local, "--to", back); code != 2 || !strings.Contains(stderr, "use merge") {
		t.Fatalf("local to local: %d %q", code, stderr)
	}
}

// marksArgs is marks against any state given by flags.
func marksArgs(t *testing.T, input string, args ...string) (nNew, nDup int) {
	out, stderr, code := run(t, strings.NewReader(input), append(args, "filter", "--dry-run", "--mark")...)
	if code != 0 {
		t.Fatalf("dry run: %d %s", code, stderr)
	}
	nNew = strings.Count(out, "new\t")
	return nNew, strings.Count(out, "\n") - nNew
}

// serve --backend: the API decides through Redis, together with a filter
// process on the same Redis; with Redis down it answers 503 and keeps
// serving.
func TestRedisServeAPI(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	addr, stop, _ := redisServer(t, tmp)
	backend := "redis://" + addr + "/0"
	sock := filepath.Join(tmp, "api.sock")
	cmd := exec.Command(binary, "--backend", backend, "serve", "--socket", sock, "--log-format", "json")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	waitDial(t, "unix", sock, 10*time.Second, "serve did not open its socket")
	c := unixClient(sock)
	filterOut, _, code := run(t, strings.NewReader(urlLines("both", 0, 3000)), "--backend", backend, "filter")
	if code != 0 {
		t.Fatal("filter")
	}
	code, body := post(t, c, "/v1/check", urlLines("both", 0, 6000))
	verdicts := strings.Split(strings.TrimSpace(body), "\n")
	if code != 200 || len(verdicts) != 6000 {
		t.Fatalf("API: %d, %d verdicts", code, len(verdicts))
	}
	apiNew := strings.Count(body, "new")
	if strings.Count(filterOut, "\n") != 3000 || apiNew != 3000 || strings.Contains(strings.Join(verdicts[:3000], ""), "new") {
		t.Fatalf("filter printed %d, API answered %d new (want the 3000 the filter had not seen)", strings.Count(filterOut, "\n"), apiNew)
	}
	stop()
	code, body = post(t, c, "/v1/check", "http://while-down.example/\n")
	if code != 503 || !strings.Contains(body, "redis unavailable") {
		t.Fatalf("with Redis down: %d %q", code, body)
	}
	resp, err := c.Get("http://urldedupd/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz with Redis down: %v", err)
	}
	resp.Body.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve exit: %v", err)
	}
}

// --on-backend-error assume-new: with Redis gone, the URLs are answered new
// (even repeats: nobody decided them), the run completes, and stderr says
// how many were answered so.
func TestRedisAssumeNew(t *testing.T) {
	t.Parallel()
	addr, stop, _ := redisServer(t, t.TempDir())
	cmd := exec.Command(binary, "--backend", "redis://"+addr+"/0", "--on-backend-error", "assume-new",
		"--redis-timeout", "1s", "filter", "--mark")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	background(t, cmd)
	sc := bufio.NewScanner(stdout)
	read := func(n int) string {
		var got []string
		for len(got) < n && sc.Scan() {
			got = append(got, sc.Text())
		}
		return strings.Join(got, "\n")
	}
	fmt.Fprint(stdin, urlLines("assume", 0, 100))
	if got := read(100); strings.Count(got, "new\t") != 100 {
		t.Fatalf("with Redis up: %q", got)
	}
	stop()
	fmt.Fprint(stdin, urlLines("assume", 0, 100)) // repeats, undecidable now
	stdin.Close()
	got := read(100)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("filter: %v, stderr %q", err, stderr.String())
	}
	if strings.Count(got, "new\t") != 100 || !strings.Contains(stderr.String(), "100 URLs answered new without Redis deciding them") {
		t.Fatalf("with Redis down: %d new, stderr %q", strings.Count(got, "new\t"), stderr.String())
	}
}

// migrate names the Redis state by its key prefix, never by the address it
// was given, which may hold a password.
func TestMigrateHidesPassword(t *testing.T) {
	t.Parallel()
	addr := redistest.Server(t)
	port := strings.TrimSuffix(strings.TrimPrefix(addr, "redis://127.0.0.1:"), "/0")
	if out, err := exec.Command("redis-cli", "-p", port, "CONFIG", "SET", "requirepass", "s3cret-pw").CombinedOutput(); err != nil {
		t.Fatalf("requirepass: %v %s", err, out)
	}
	local := filepath.Join(t.TempDir(), "state")
	if _, _, code := run(t, strings.NewReader("http://a.example/\n"), "--dir", local, "filter"); code != 0 {
		t.Fatal("filter")
	}
	backend := "redis://:s3cret-pw@127.0.0.1:" + port + "/0"
	out, stderr, code := run(t, nil, "migrate", "--from", local, "--to", backend)
	if code != 0 || strings.Contains(out+stderr, "s3cret") || !strings.Contains(out, "redis urldedupd") {
		t.Fatalf("migrate: %d %q %q", code, out, stderr)
	}
	_, stderr, code = run(t, nil, "migrate", "--from", backend, "--to", filepath.Join(t.TempDir(), "back"))
	if code != 0 || strings.Contains(stderr, "s3cret") {
		t.Fatalf("migrate back: %d %q", code, stderr)
	}
}
