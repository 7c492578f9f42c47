package main_test

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var binary string

// TestMain builds the command once for every test. Every test of this
// package calls t.Parallel: each works in its own temporary directory,
// network namespaces, ports (taken free, redistest.Start trying again
// when another took one first) and processes, which it kills by pid, so
// any may run beside any other; most of their time is spent waiting on
// the processes they start (make test runs them four at a time). A new
// test that cannot share the machine (one that changes something global)
// must say so and not call t.Parallel.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "urldedupd-bin-")
	if err != nil {
		panic(err)
	}
	os.Chmod(dir, 0o755) // the read-only test runs it as nobody
	binary = filepath.Join(dir, "urldedupd")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// writeURLs writes n lines to a file: URL ids drawn by pick, already in
// normal form so that their signature is the CRC32 of the line.
func writeURLs(t *testing.T, path string, n int, pick func(i int) int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var line []byte
	for i := range n {
		line = appendURL(line[:0], pick(i))
		w.Write(append(line, '\n'))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// appendURL appends URL id's line, http://hostH.example.com/path/page-ID.html
// with H the id mod 997, to b.
func appendURL(b []byte, id int) []byte {
	b = append(b, "http://host"...)
	b = strconv.AppendInt(b, int64(id%997), 10)
	b = append(b, ".example.com/path/page-"...)
	b = strconv.AppendInt(b, int64(id), 10)
	return append(b, ".html"...)
}

// byLine identifies a line of writeURLs by its URL id: the line itself,
// for the keyed layouts (whose 32-bit fingerprints are keyed: two of these
// lines share one with a chance of about 1e-9). A line that is not exactly
// one writeURLs writes is not one of its URLs (ok false).
func byLine(l []byte) (id uint64, ok bool) {
	i := bytes.LastIndexByte(l, '-')
	if i < 0 || !bytes.HasSuffix(l, []byte(".html")) {
		return 0, false
	}
	n, err := strconv.Atoi(string(l[i+1 : len(l)-len(".html")]))
	if err != nil || n < 0 {
		return 0, false
	}
	var buf [96]byte
	return uint64(n), bytes.Equal(l, appendURL(buf[:0], n))
}

// byLine gives back the id of each line writeURLs writes, and no id to
// any other line, however close.
func TestByLine(t *testing.T) {
	t.Parallel()
	for _, id := range []int{0, 996, 997, 123_456_789} {
		if got, ok := byLine(appendURL(nil, id)); !ok || got != uint64(id) {
			t.Errorf("%s: %d %v, want %d", appendURL(nil, id), got, ok, id)
		}
	}
	for _, l := range []string{
		"http://host6.example.com/path/page-5.html",  // host of another id
		"http://host5.example.com/path/page-5.html ", // a space past it
		"http://host5.example.com/path/page-05.html", // another spelling
		"http://host5.example.com/path/page--5.html", // a sign
		"https://host5.example.com/path/page-5.html", // another scheme
		"http://host5.example.com/path/page-5.htm",   // another suffix
		"http://host5.example.com/path/page-.html",   // no id
		"",
	} {
		if id, ok := byLine([]byte(l)); ok {
			t.Errorf("%q: id %d, want none", l, id)
		}
	}
}

// byCRC identifies a line by its CRC32: the bitmap layout keeps one bit
// per CRC32, so lines that share one are one URL to it.
func byCRC(l []byte) (uint64, bool) { return uint64(crc32.ChecksumIEEE(l)), true }

// Four filter processes at once on overlapping inputs (4 x 1M lines, half
// of each drawn from a pool all four share) against one state that none of
// them has created yet: every distinct signature comes out exactly once.
func TestFilterExactlyOnceAcrossProcesses(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state")
	n := filterExactlyOnce(t, 1_000_000, 300_000, "--dir", state)
	t.Logf("4 processes x 1,000,000 lines: %d distinct signatures, each printed once", n)
}

// filterExactlyOnce runs four filter processes at once, with the given
// state flags, on overlapping inputs (half of each line drawn from a pool
// of shared ids), and checks, against signatures computed here with
// hash/crc32 independently of the product, that every distinct signature
// is printed exactly once. It returns how many there were.
func filterExactlyOnce(t *testing.T, lines, shared int, stateArgs ...string) int {
	t.Helper()
	return exactlyOnce(t, byCRC, lines, shared, stateArgs...)
}

// exactlyOnce is filterExactlyOnce with the identity of a line given by
// key (byCRC, byLine). Identities are integers: the counts of millions of
// lines in maps keyed by the lines took more CPU than the processes under
// test.
func exactlyOnce(t *testing.T, key func([]byte) (uint64, bool), lines, shared int, stateArgs ...string) int {
	t.Helper()
	tmp := t.TempDir()
	const procs = 4
	inputs := make([]string, procs)
	want := make(map[uint64]bool, procs*lines)
	for p := range procs {
		inputs[p] = filepath.Join(tmp, fmt.Sprintf("in%d.txt", p))
		rng := rand.New(rand.NewPCG(uint64(p), 99))
		writeURLs(t, inputs[p], lines, func(i int) int {
			if i%2 == 0 {
				return rng.IntN(shared) // the shared pool, with repeats
			}
			return (p+1)*10_000_000 + rng.IntN(lines) // this process's own
		})
		data, _ := os.ReadFile(inputs[p])
		for _, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			k, ok := key(l)
			if !ok {
				t.Fatalf("input line %q has no identity", l)
			}
			want[k] = true
		}
	}
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	if slices.ContainsFunc(stateArgs, func(a string) bool { return strings.HasPrefix(a, "--backend") }) &&
		!slices.ContainsFunc(stateArgs, func(a string) bool { return strings.HasPrefix(a, "--redis-timeout") }) {
		// A batch's deadline is the machine's, not the product's: on a
		// machine this loaded a batch can wait seconds for a CPU.
		stateArgs = append(slices.Clip(stateArgs), "--redis-timeout", "120s")
	}
	stop := loadMachine(t) // a busy machine must change nothing
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(binary, append(append([]string{}, stateArgs...), "filter", inputs[p])...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			outs[p], errs[p] = cmd.Output()
			if errs[p] != nil {
				errs[p] = fmt.Errorf("%v: %s", errs[p], stderr.String())
			}
		}()
	}
	wg.Wait()
	stop()
	got := make(map[uint64]int, len(want))
	strange := 0 // lines printed that are no URL of the input at all
	for p := range procs {
		if errs[p] != nil {
			t.Errorf("process %d: %v", p, errs[p])
		}
		for _, l := range bytes.Split(bytes.TrimSuffix(outs[p], []byte("\n")), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			if k, ok := key(l); ok {
				got[k]++
			} else {
				strange++
			}
		}
	}
	if lost, twice, foreign := countOnce(want, got); lost+twice+foreign+strange > 0 {
		foreign += strange
		t.Fatalf("of %d distinct URLs: %d lost (never printed new), %d printed new more than once; %d printed that were not input", len(want), lost, twice, foreign)
	}
	if t.Failed() {
		t.FailNow()
	}
	return len(want)
}

// countOnce counts, separately, the URLs of want never printed (lost),
// those printed more than once (twice), and printed ones not in want.
func countOnce[K comparable](want map[K]bool, got map[K]int) (lost, twice, foreign int) {
	for k, n := range got {
		switch {
		case !want[k]:
			foreign++
		case n > 1:
			twice++
		}
	}
	for k := range want {
		if got[k] == 0 {
			lost++
		}
	}
	return lost, twice, foreign
}

// loadMachine keeps every CPU of the machine busy until stop is called or
// the test ends: stress-ng with a worker per CPU, bounded by its own
// timeout and stopped by pid. Tests of exactly-once use it: what
// they assert must hold on a fully loaded machine.
//
// The tests run in parallel, so one stress-ng serves every test that
// asked for it at the time: it starts with the first and stops with the
// last. Each still runs on a machine whose every CPU has a busy worker;
// one stress-ng per test would only have taken more CPU from the tests
// around it.
func loadMachine(t *testing.T) (stop func()) {
	t.Helper()
	load.Lock()
	defer load.Unlock()
	if load.users == 0 {
		cmd := exec.Command("stress-ng", "--cpu", fmt.Sprint(runtime.NumCPU()), "--timeout", "900s", "--quiet")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its workers are its children: stopped with it
		if err := cmd.Start(); err != nil {
			t.Fatalf("stress-ng (scripts/install-deps.sh installs it): %v", err)
		}
		load.cmd = cmd
	}
	load.users++
	var once sync.Once
	stop = func() {
		once.Do(func() {
			load.Lock()
			defer load.Unlock()
			if load.users--; load.users == 0 {
				syscall.Kill(-load.cmd.Process.Pid, syscall.SIGKILL)
				load.cmd.Wait()
				load.cmd = nil
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// load is the stress-ng of loadMachine and the number of tests using it.
var load struct {
	sync.Mutex
	users int
	cmd   *exec.Cmd
}

// A filter fed URLs through a pipe is killed with SIGKILL at a random
// point; every URL it had printed as new is a duplicate afterwards.
func TestFilterSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state")
	if out, err := exec.Command(binary, "--dir", state, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	got, killAt := filterKilled(t, "--dir", state)
	t.Logf("killed after %d lines written; %d printed, all dup after restart", killAt, len(got))
}

// filterKilled runs filter on an existing state (stateArgs), writes it up
// to 10M URLs "http://kill.example.com/N" through a pipe and, at a random
// moment after its first output, kills it with SIGKILL; it checks that
// every URL printed is a duplicate afterwards and returns them, and how
// many lines were written.
func filterKilled(t *testing.T, stateArgs ...string) (printedURLs []string, written int) {
	t.Helper()
	cmd := exec.Command(binary, append(append([]string{}, stateArgs...), "filter")...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	printed := make(chan []string, 1)
	first := make(chan struct{})
	go func() {
		var data []byte
		buf := make([]byte, 64<<10)
		for {
			n, err := stdout.Read(buf)
			if n > 0 && len(data) == 0 {
				close(first)
			}
			data = append(data, buf[:n]...)
			if err != nil {
				break
			}
		}
		// Only complete lines were printed: the kill may cut the last one.
		data = data[:bytes.LastIndexByte(data, '\n')+1]
		if len(data) == 0 {
			printed <- nil
			return
		}
		printed <- strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	}()
	// Write lines while the filter works; kill it at a random moment.
	writtenc := make(chan int, 1)
	go func() {
		w := bufio.NewWriter(stdin)
		i := 0
		for ; i < 10_000_000; i++ {
			if _, err := fmt.Fprintf(w, "http://kill.example.com/%d\n", i); err != nil {
				break // the pipe broke: killed
			}
		}
		w.Flush()
		stdin.Close()
		writtenc <- i
	}()
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		t.Fatal("filter printed nothing in 30 s")
	}
	time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	killAt := <-writtenc
	got := <-printed
	if len(got) == 0 {
		t.Fatal("nothing printed before the kill")
	}
	check := exec.Command(binary, append(append([]string{}, stateArgs...), "filter", "--dry-run", "--mark")...)
	check.Stdin = strings.NewReader(strings.Join(got, "\n") + "\n")
	out, err := check.Output()
	if err != nil {
		t.Fatal(err)
	}
	marks := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(marks) != len(got) {
		t.Fatalf("%d verdicts for %d URLs", len(marks), len(got))
	}
	for _, m := range marks {
		if !strings.HasPrefix(m, "dup\t") {
			t.Fatalf("after SIGKILL: %q (of %d printed, killed at line %d)", m, len(got), killAt)
		}
	}
	return got, killAt
}

func run(t *testing.T, stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, patientRedis(args)...)
	cmd.Stdin = stdin
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// patientRedis gives a command against Redis (--backend) a --redis-timeout
// of 120 s unless it names its own: the default 10 s is a product choice,
// and a redis-server with appendfsync always on a loaded machine's disk
// can take longer than that to answer a batch (TestRedisLocalCache failed
// "i/o timeout" beside a build writing 512 MiB states). Tests of the
// timeout itself pass --redis-timeout.
func patientRedis(args []string) []string {
	i := slices.Index(args, "--backend")
	if i < 0 || i+1 >= len(args) || slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--redis-timeout") }) {
		return args
	}
	return slices.Concat(args[:i+2], []string{"--redis-timeout", "120s"}, args[i+2:])
}

// SIGINT: a filter waiting on an idle pipe stops with exit code 130 and all
// decided output written; a second SIGINT ends it at once.
func TestFilterSIGINT(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state")
	if out, err := exec.Command(binary, "--dir", state, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	for _, second := range []bool{false, true} {
		cmd := exec.Command(binary, "--dir", state, "filter", "--mark")
		stdin, _ := cmd.StdinPipe()
		out := &lockedBuffer{}
		cmd.Stdout = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(stdin, "http://sigint.example/%v\n", second)
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(out.String(), "sigint") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // the line is answered while the pipe stays open
		}
		cmd.Process.Signal(syscall.SIGINT)
		time.Sleep(100 * time.Millisecond)
		if second {
			cmd.Process.Signal(syscall.SIGINT)
		} else {
			fmt.Fprintln(stdin, "http://after.example/")
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatal("filter did not stop after SIGINT")
		}
		stdin.Close()
		ee, ok := err.(*exec.ExitError)
		if !second && (!ok || ee.ExitCode() != 130) {
			t.Fatalf("first SIGINT: %v, want exit 130", err)
		}
		// The first SIGINT usually ends it before the second arrives (exit
		// 130); a second one that finds it still running ends it at once.
		if second && (!ok || ee.ExitCode() != 130 && ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT) {
			t.Fatalf("second SIGINT: %v, want exit 130 or killed by SIGINT", err)
		}
		if want := fmt.Sprintf("new\thttp://sigint.example/%v\n", second); !strings.HasPrefix(out.String(), want) {
			t.Fatalf("output %q, want %q first", out.String(), want)
		}
	}
}

// lockedBuffer is written by exec's copying goroutine and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
