package keyed

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const onceShardBytes = 64 << 10 // 262,144 buckets: no overflow at these loads

// TestMain runs the helper process when the test binary is re-executed by
// the multi-process tests.
func TestMain(m *testing.M) {
	if spec := os.Getenv("KEYED_HELPER"); spec != "" {
		os.Exit(helper(spec))
	}
	os.Exit(m.Run())
}

// helper maps dir, decides count URLs of family "x" from index from on,
// modulo total, in batches of 256 and writes "n <index>" for each new one
// and "." after each batch.
func helper(spec string) int {
	var dir string
	var from, count, total int
	if _, err := fmt.Sscanf(spec, "%s %d %d %d", &dir, &from, &count, &total); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	tb := &testing.T{}
	tab, err := NewTable(mapShards(tb, dir, onceShardBytes), false)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	all := testLocs(tab.Geometry(), "x", 0, total)
	locs := make([]Loc, count)
	for k := range locs {
		locs[k] = all[(from+k)%total]
	}
	res := make([]Result, 256)
	var out []byte
	for off := 0; off < len(locs); off += len(res) {
		part := locs[off:min(off+len(res), len(locs))]
		tab.DecideBatch(part, res, false)
		out = out[:0]
		for i := range part {
			if res[i] == New {
				out = append(out, "n "...)
				out = strconv.AppendInt(out, int64((from+off+i)%total), 10)
				out = append(out, '\n')
			}
		}
		out = append(out, ".\n"...)
		if _, err := os.Stdout.Write(out); err != nil {
			return 3
		}
	}
	return 0
}

// checkOnce checks that of URLs [0, n) of family "x" every one is stored,
// none was reported new twice, and at most unreported were stored without
// being reported; and that every non-empty slot holds one of their
// fingerprints (no torn write).
func checkOnce(t *testing.T, tab *Table, shards [][]byte, n int, news map[int]int, unreported int) {
	t.Helper()
	locs := testLocs(tab.Geometry(), "x", 0, n)
	byKey := map[locKey]int{}
	fps := map[uint32]bool{}
	for i, l := range locs {
		if _, ok := byKey[keyOf(l)]; !ok {
			byKey[keyOf(l)] = i
		}
		fps[l.FP] = true
	}
	perKey := map[locKey]int{}
	for i, c := range news {
		perKey[keyOf(locs[i])] += c
	}
	missing := 0
	for k, first := range byKey {
		switch c := perKey[k]; {
		case c > 1:
			t.Errorf("URL %d reported new %d times", first, c)
		case c == 0:
			missing++
		}
		if r := tab.Query(locs[first]); r != Dup {
			t.Errorf("URL %d not stored: %v", first, r)
		}
	}
	if missing > unreported {
		t.Errorf("%d URLs stored and never reported new, at most %d allowed", missing, unreported)
	}
	for s := range tab.shards {
		for b := range tab.shards[s] {
			for _, v := range tab.shards[s][b] {
				if v != 0 && !fps[toSlot(v)] {
					t.Fatalf("shard %02x bucket %d holds %08x, no URL's fingerprint", s, b, v)
				}
			}
		}
	}
	t.Logf("%d URLs (%d distinct), %d reported new, %d never reported", n, len(byKey), len(news), missing)
}

// TestExactlyOnceGoroutines: 8 goroutines on one MAP_SHARED mapping, each
// deciding half of 400,000 URLs (sized: 50,000 under -race), every URL by
// four of them.
func TestExactlyOnceGoroutines(t *testing.T) {
	const workers = 8
	n := sized(400000)
	shards := mapShards(t, t.TempDir(), onceShardBytes)
	tab, err := NewTable(shards, false)
	if err != nil {
		t.Fatal(err)
	}
	locs := testLocs(tab.Geometry(), "x", 0, n)
	news := make([][]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			res := make([]Result, 300)
			for j := 0; j < n/2; j += len(res) {
				var part []Loc
				for k := j; k < min(j+len(res), n/2); k++ {
					part = append(part, locs[(w*n/workers+k)%n])
				}
				if w%2 == 0 { // half the workers one by one, half in batches
					for k, l := range part {
						res[k] = tab.Decide(l)
					}
				} else {
					tab.DecideBatch(part, res, false)
				}
				for k := range part {
					if res[k] == New {
						news[w] = append(news[w], (w*n/workers+j+k)%n)
					}
				}
			}
		})
	}
	wg.Wait()
	all := map[int]int{}
	for _, ns := range news {
		for _, i := range ns {
			all[i]++
		}
	}
	checkOnce(t, tab, shards, n, all, 0)
	if c := tab.Counts(); c.New != uint64(len(all)) || c.New+c.Dup != uint64(workers*n/2) || c.Full != 0 {
		t.Errorf("counts %+v for %d new", c, len(all))
	}
}

type helperProc struct {
	cmd  *exec.Cmd
	out  io.ReadCloser
	news []int
	done chan struct{}
	dots int
	mu   sync.Mutex
}

func startHelper(t *testing.T, dir string, from, count, total int) *helperProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("KEYED_HELPER=%s %d %d %d", dir, from, count, total))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	p := &helperProc{cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			if line == "." {
				p.dots++
			} else if i, err := strconv.Atoi(strings.TrimPrefix(line, "n ")); err == nil {
				p.news = append(p.news, i)
			}
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *helperProc) wait(t *testing.T, wantOK bool) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(5 * time.Minute):
		t.Fatal("helper did not finish in 5 minutes")
	}
	if err := p.cmd.Wait(); (err == nil) != wantOK {
		t.Errorf("helper %v: %v", p.cmd.Env[len(p.cmd.Env)-1], err)
	}
}

// TestExactlyOnceProcesses: 4 processes on one set of MAP_SHARED files,
// each deciding half of 400,000 URLs (sized: 50,000 under -race), every
// URL by two of them.
func TestExactlyOnceProcesses(t *testing.T) {
	n := sized(400000)
	dir := t.TempDir()
	var ps []*helperProc
	for w := range 4 {
		from := w * n / 4
		ps = append(ps, startHelper(t, dir, from, n/2, n))
	}
	for _, p := range ps {
		p.wait(t, true)
	}
	shards := mapShards(t, dir, onceShardBytes)
	tab, _ := NewTable(shards, true)
	news := map[int]int{}
	for _, p := range ps {
		for _, i := range p.news {
			news[i]++
		}
	}
	checkOnce(t, tab, shards, n, news, 0)
}

// TestKillMidRun kills one of 4 processes with SIGKILL mid-run: the others
// still decide every URL exactly once, and at most the killed process's
// last batch (stored, not yet reported) is never reported new. 600,000
// URLs (sized: 75,000 under -race, still 293 batches for the victim,
// killed after 100).
func TestKillMidRun(t *testing.T) {
	const batch = 256
	n := sized(600000)
	dir := t.TempDir()
	victim := startHelper(t, dir, 0, n, n)
	var ps []*helperProc
	for w := range 3 {
		from := w * n / 3
		ps = append(ps, startHelper(t, dir, from, n/2, n))
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		victim.mu.Lock()
		d := victim.dots
		victim.mu.Unlock()
		if d >= 100 {
			break
		}
		select {
		case <-victim.done:
			t.Fatal("the victim finished before it was killed")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the victim made no progress")
		}
		time.Sleep(time.Millisecond)
	}
	syscall.Kill(victim.cmd.Process.Pid, syscall.SIGKILL)
	victim.wait(t, false)
	news := map[int]int{}
	for _, p := range append(ps, victim) {
		if p != victim {
			p.wait(t, true)
		}
		for _, i := range p.news {
			news[i]++
		}
	}
	shards := mapShards(t, dir, onceShardBytes)
	tab, _ := NewTable(shards, true)
	t.Logf("victim killed after %d batches", victim.dots)
	checkOnce(t, tab, shards, n, news, batch)
}
