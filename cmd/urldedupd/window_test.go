package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/urldedupd/urldedupd/internal/redistest"
	"github.com/urldedupd/urldedupd/internal/window"
)

// windowClock is the clock of every process a test starts from the
// testhooks binary: a mapped file of the time in Unix nanoseconds
// ($URLDEDUPD_TEST_CLOCK), moved by the test.
type windowClock struct {
	path string
	v    *int64
}

func newWindowClock(t *testing.T, at time.Time) *windowClock {
	t.Helper()
	p := filepath.Join(t.TempDir(), "clock")
	if err := os.WriteFile(p, make([]byte, 8), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := unix.Mmap(int(f.Fd()), 0, 8, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	c := &windowClock{path: p, v: (*int64)(unsafe.Pointer(&b[0]))}
	c.Set(at)
	return c
}

func (c *windowClock) Set(at time.Time) { atomic.StoreInt64(c.v, at.UnixNano()) }

// windowRun runs the testhooks binary with the clock and extra
// environment, and returns its output and exit error.
func (c *windowClock) run(t *testing.T, env []string, stdin []byte, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(hooksBinary(t), patientRedis(args)...)
	cmd.Env = append(append(os.Environ(), "URLDEDUPD_TEST_CLOCK="+c.path), env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return o.String(), e.String(), err
}

// windowOf reads a windowed state's epoch and generation length from
// stats --json.
func (c *windowClock) windowOf(t *testing.T, stateArgs ...string) (epoch time.Time, length time.Duration, gen int64) {
	t.Helper()
	out, stderr, err := c.run(t, nil, nil, append(append([]string{}, stateArgs...), "stats", "--json")...)
	if err != nil {
		t.Fatalf("stats: %v: %s", err, stderr)
	}
	var r struct {
		Window struct {
			Epoch      string `json:"epoch"`
			Length     string `json:"generation_length"`
			Generation int64  `json:"generation"`
		} `json:"window"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("stats --json: %v: %s", err, out)
	}
	epoch, err = time.Parse(time.RFC3339Nano, r.Window.Epoch)
	if err != nil {
		t.Fatalf("epoch %q: %v", r.Window.Epoch, err)
	}
	if length, err = window.ParseDuration(r.Window.Length); err != nil {
		t.Fatalf("generation length %q: %v", r.Window.Length, err)
	}
	return epoch, length, r.Window.Generation
}

// windowURLs are n URLs of a test, in normal form.
func windowURLs(prefix string, n int) []string {
	u := make([]string, n)
	for i := range u {
		u[i] = fmt.Sprintf("http://%s%d.example/page/%d", prefix, i%97, i)
	}
	return u
}

func lines(urls []string) []byte { return []byte(strings.Join(urls, "\n") + "\n") }

// TestWindowFirstSeenProcesses: 4 filter processes on overlapping inputs
// against a windowed keyed state (window 30d in 3 generations), in 4
// rounds a whole window apart, the clock moved a generation further while
// they decide: in each round every URL is printed new exactly once (none
// lost, none twice), across 8 generation boundaries and a rotation under
// way in every round.
func TestWindowFirstSeenProcesses(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	windowRounds(t, "--dir", dir)
}

func windowRounds(t *testing.T, stateArgs ...string) {
	t.Helper()
	clock := newWindowClock(t, time.Now())
	if _, stderr, err := clock.run(t, nil, nil, append(append([]string{}, stateArgs...), "init", "--layout", "keyed", "--window", "30d", "--generations", "3")...); err != nil {
		t.Fatalf("init: %v: %s", err, stderr)
	}
	epoch, length, _ := clock.windowOf(t, stateArgs...)
	if length != 10*24*time.Hour {
		t.Fatalf("generation length %v, want 10 days", length)
	}
	const procs, pool, each = 4, 6000, 4000
	all := windowURLs("w", pool)
	stop := loadMachine(t)
	defer stop()
	for round := range 4 {
		at := epoch.Add(time.Duration(4*round)*length + length/2)
		clock.Set(at)
		inputs := make([][]byte, procs)
		want := map[string]bool{}
		for p := range procs {
			rng := rand.New(rand.NewPCG(uint64(round), uint64(p)))
			in := make([]string, each)
			for i := range in {
				in[i] = all[rng.IntN(pool)]
				want[in[i]] = true
			}
			inputs[p] = lines(in)
		}
		outs := make([]string, procs)
		errs := make([]error, procs)
		var wg sync.WaitGroup
		for p := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var stderr string
				outs[p], stderr, errs[p] = clock.run(t, nil, inputs[p], append(append([]string{}, stateArgs...), "filter")...)
				if errs[p] != nil {
					errs[p] = fmt.Errorf("%v: %s", errs[p], stderr)
				}
			}()
		}
		time.Sleep(20 * time.Millisecond)
		clock.Set(at.Add(length)) // the next generation, while they decide
		wg.Wait()
		got := map[string]int{}
		for p := range procs {
			if errs[p] != nil {
				t.Fatalf("round %d, process %d: %v", round, p, errs[p])
			}
			for _, l := range strings.Split(strings.TrimSuffix(outs[p], "\n"), "\n") {
				if l != "" {
					got[l]++
				}
			}
		}
		if lost, twice, foreign := countOnce(want, got); lost+twice+foreign > 0 {
			t.Fatalf("round %d: of %d URLs, %d lost (never printed new), %d printed new more than once, %d foreign", round, len(want), lost, twice, foreign)
		}
	}
	_, _, gen := clock.windowOf(t, stateArgs...)
	if gen != 13 {
		t.Errorf("stats says generation %d; the clock is at 13", gen)
	}
}

// TestWindowPolicies: one generation at a time over 10 generations of a
// window of 3, set A sighted in every one and set B only in the first and
// the sixth. Under last-seen A is new only at the first sighting (a URL
// seen every generation never comes back) and B at both; under
// first-seen A is new again every 3 generations (0, 3, 6, 9).
func TestWindowPolicies(t *testing.T) {
	t.Parallel()
	a, b := windowURLs("a", 300), windowURLs("b", 300)
	for _, tc := range []struct {
		policy string
		aNew   []int // the generations where A is printed
	}{
		{"last-seen", []int{0}},
		{"first-seen", []int{0, 3, 6, 9}},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			clock := newWindowClock(t, time.Now())
			if _, stderr, err := clock.run(t, nil, nil, "--dir", dir, "init", "--layout", "keyed", "--window", "3h", "--generations", "3", "--policy", tc.policy); err != nil {
				t.Fatalf("init: %v: %s", err, stderr)
			}
			epoch, length, _ := clock.windowOf(t, "--dir", dir)
			for g := range 10 {
				clock.Set(epoch.Add(time.Duration(g)*length + length/3))
				in := a
				if g == 0 || g == 5 {
					in = append(append([]string{}, a...), b...)
				}
				out, stderr, err := clock.run(t, nil, lines(in), "--dir", dir, "filter")
				if err != nil {
					t.Fatalf("generation %d: %v: %s", g, err, stderr)
				}
				var na, nb int
				for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
					switch {
					case strings.HasPrefix(l, "http://a"):
						na++
					case strings.HasPrefix(l, "http://b"):
						nb++
					}
				}
				wantA := 0
				for _, w := range tc.aNew {
					if w == g {
						wantA = len(a)
					}
				}
				wantB := 0
				if g == 0 || g == 5 {
					wantB = len(b)
				}
				if na != wantA || nb != wantB {
					t.Errorf("generation %d: %d of A and %d of B printed new; want %d and %d", g, na, nb, wantA, wantB)
				}
			}
		})
	}
}

// TestWindowKilledMidRotation: a process killed (SIGKILL, through the
// testhooks binary's kill points) in the middle of advancing a shard to a
// new generation, after the sweep (swept), after the sweep's progress is
// written but before W (header), and half way through the whole sweep
// after a pause of 100 generations (jump); then the same input again:
// every URL is printed new exactly once over the two runs, and those
// still in the window are not printed at all.
func TestWindowKilledMidRotation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		at    string
		pause int // generations between the first sightings and the killed run
	}{
		{"swept", 1}, {"header", 1}, {"jump", 100},
	} {
		t.Run(tc.at, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			clock := newWindowClock(t, time.Now())
			if _, stderr, err := clock.run(t, nil, nil, "--dir", dir, "init", "--layout", "keyed", "--window", "30d", "--generations", "3"); err != nil {
				t.Fatalf("init: %v: %s", err, stderr)
			}
			epoch, length, _ := clock.windowOf(t, "--dir", dir)
			old, fresh := windowURLs("o", 3000), windowURLs("f", 3000)
			clock.Set(epoch.Add(length / 2))
			if out, stderr, err := clock.run(t, nil, lines(old), "--dir", dir, "filter"); err != nil || strings.Count(out, "\n") != len(old) {
				t.Fatalf("first sightings: %v: %d printed: %s", err, strings.Count(out, "\n"), stderr)
			}
			clock.Set(epoch.Add(time.Duration(tc.pause)*length + length/2))
			in := lines(append(append([]string{}, old...), fresh...))
			out1, _, err := clock.run(t, []string{"URLDEDUPD_TEST_KILL_AT=" + tc.at}, in, "--dir", dir, "filter")
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the process was not killed at %s: %v", tc.at, err)
			}
			out2, stderr, err := clock.run(t, nil, in, "--dir", dir, "filter")
			if err != nil {
				t.Fatalf("re-run: %v: %s", err, stderr)
			}
			want := map[string]bool{}
			for _, u := range fresh {
				want[u] = true
			}
			if tc.pause > 3 { // the old sightings have left the window too
				for _, u := range old {
					want[u] = true
				}
			}
			got := map[string]int{}
			for _, l := range strings.Split(strings.TrimSuffix(out1+out2, "\n"), "\n") {
				if l != "" {
					got[l]++
				}
			}
			if lost, twice, foreign := countOnce(want, got); lost+twice+foreign > 0 {
				t.Fatalf("killed at %s: of %d URLs, %d lost, %d printed new twice, %d printed that should be held", tc.at, len(want), lost, twice, foreign)
			}
			if _, _, gen := clock.windowOf(t, "--dir", dir); gen != int64(tc.pause) {
				t.Errorf("stats says generation %d, want %d", gen, tc.pause)
			}
		})
	}
}

// TestForgetKeyed: on keyed and keyed-window states holding a million
// URLs, forget makes 100 of them new again and leaves the other 999,900
// duplicates; on bitmap and bitmap-window it is refused (exit 2, the
// reason given) and changes nothing.
func TestForgetKeyed(t *testing.T) {
	t.Parallel()
	urls := windowURLs("n", 1_000_000)
	file := filepath.Join(t.TempDir(), "urls.txt")
	if err := os.WriteFile(file, lines(urls), 0o644); err != nil {
		t.Fatal(err)
	}
	var forget []string
	for i := 0; i < len(urls); i += len(urls) / 100 {
		forget = append(forget, urls[i])
	}
	for _, init := range [][]string{{"--layout", "keyed"}, {"--layout", "keyed", "--window", "30d"}} {
		t.Run(strings.Join(init, " "), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if _, stderr, code := run(t, nil, append([]string{"--dir", dir, "init"}, init...)...); code != 0 {
				t.Fatalf("init: %s", stderr)
			}
			if out, stderr, code := run(t, nil, "--dir", dir, "filter", file); code != 0 || strings.Count(out, "\n") != len(urls) {
				t.Fatalf("filter: %d, %d printed: %s", code, strings.Count(out, "\n"), stderr)
			}
			out, stderr, code := run(t, strings.NewReader(string(lines(forget))+"http://never.example/\n"), "--dir", dir, "forget", "-")
			if code != 0 || strings.Count(out, "forgotten\t") != len(forget) || !strings.Contains(out, "absent\thttp://never.example/") {
				t.Fatalf("forget: %d %s %s", code, out, stderr)
			}
			out, stderr, code = run(t, nil, "--dir", dir, "filter", "--dry-run", "--mark", file)
			if code != 0 {
				t.Fatalf("filter --dry-run: %s", stderr)
			}
			isForgotten := map[string]bool{}
			for _, u := range forget {
				isForgotten[u] = true
			}
			var wrongNew, wrongDup int
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				verdict, u, _ := strings.Cut(l, "\t")
				switch {
				case isForgotten[u] && verdict != "new":
					wrongDup++
				case !isForgotten[u] && verdict != "dup":
					wrongNew++
				}
			}
			if wrongNew+wrongDup > 0 {
				t.Fatalf("after forgetting %d of %d: %d neighbours answered new, %d forgotten answered dup", len(forget), len(urls), wrongNew, wrongDup)
			}
			if out, _, _ := run(t, strings.NewReader(string(lines(forget))), "--dir", dir, "filter"); strings.Count(out, "\n") != len(forget) {
				t.Fatalf("the forgotten URLs were not new at their next sighting: %d of %d", strings.Count(out, "\n"), len(forget))
			}
		})
	}
	for _, init := range [][]string{{"--layout", "bitmap"}, {"--layout", "bitmap", "--window", "1h", "--generations", "1"}} {
		t.Run(strings.Join(init, " "), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if _, stderr, code := run(t, nil, append([]string{"--dir", dir, "init"}, init...)...); code != 0 {
				t.Fatalf("init: %s", stderr)
			}
			run(t, strings.NewReader(string(lines(forget))), "--dir", dir, "filter")
			_, stderr, code := run(t, nil, "--dir", dir, "forget", forget[0])
			if code != 2 || !strings.Contains(stderr, "cannot forget a URL") || !strings.Contains(stderr, "share") {
				t.Fatalf("forget on %v: exit %d: %s", init, code, stderr)
			}
			if out, _, _ := run(t, nil, "--dir", dir, "check", forget[0]); !strings.HasPrefix(out, "dup\t") {
				t.Fatalf("a refused forget changed the state: %s", out)
			}
		})
	}
}

// TestWindowRedis: the rounds of TestWindowFirstSeenProcesses on a
// windowed keyed state in a real redis-server and in a 3-master Redis
// Cluster (each shard key decided by one script run, sent through the
// per-master pipes): every URL new exactly once a round.
func TestWindowRedis(t *testing.T) {
	t.Parallel()
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		windowRounds(t, "--backend", redistest.Server(t))
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		masters, _ := redisCluster(t)
		windowRounds(t, "--backend", "redis-cluster://"+strings.Join(masters, ","))
	})
}

// TestForgetRedis: forget on keyed and keyed-window states in a real
// redis-server (the keyed script's forget mode and the windowed script's)
// makes the forgotten URLs new and leaves their 10,000 neighbours
// duplicates, with a local cache in front too; on a bitmap in Redis it is
// refused, exit 2.
func TestForgetRedis(t *testing.T) {
	t.Parallel()
	urls := windowURLs("r", 10_000)
	var forget []string
	for i := 0; i < len(urls); i += 100 {
		forget = append(forget, urls[i])
	}
	isForgotten := map[string]bool{}
	for _, u := range forget {
		isForgotten[u] = true
	}
	addr := redistest.Server(t)
	for i, init := range [][]string{{"--layout", "keyed"}, {"--layout", "keyed", "--window", "30d"}, {"--layout", "bitmap"}, {"--layout", "keyed", "cache"}} {
		t.Run(strings.Join(init, " "), func(t *testing.T) {
			state := []string{"--backend", addr, "--redis-prefix", fmt.Sprint("forget", i)}
			if init[len(init)-1] == "cache" { // a local cache in front: it must forget too
				init = init[:len(init)-1]
				state = append(state, "--local-cache", filepath.Join(t.TempDir(), "cache"))
			}
			if _, stderr, code := run(t, nil, append(append(state[:len(state):len(state)], "init"), init...)...); code != 0 {
				t.Fatalf("init: %s", stderr)
			}
			run(t, strings.NewReader(string(lines(urls))), append(state[:len(state):len(state)], "filter")...)
			out, stderr, code := run(t, strings.NewReader(string(lines(forget))), append(state[:len(state):len(state)], "forget", "-")...)
			if init[1] == "bitmap" {
				if code != 2 || !strings.Contains(stderr, "cannot forget") {
					t.Fatalf("forget on a bitmap in Redis: exit %d: %s", code, stderr)
				}
				return
			}
			if code != 0 || strings.Count(out, "forgotten\t") != len(forget) {
				t.Fatalf("forget: exit %d, %d forgotten: %s", code, strings.Count(out, "forgotten\t"), stderr)
			}
			out, stderr, code = run(t, strings.NewReader(string(lines(urls))), append(state[:len(state):len(state)], "filter", "--dry-run", "--mark")...)
			if code != 0 {
				t.Fatalf("filter --dry-run: %s", stderr)
			}
			var wrong int
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				verdict, u, _ := strings.Cut(l, "\t")
				if (verdict == "new") != isForgotten[u] {
					wrong++
				}
			}
			if wrong > 0 {
				t.Fatalf("%d of %d URLs answered wrongly after forgetting %d", wrong, len(urls), len(forget))
			}
		})
	}
}
