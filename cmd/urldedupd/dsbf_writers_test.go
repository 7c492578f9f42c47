package main_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A DSBF in Redis keeps its false-duplicate bound with many writers at
// once: 150,000 distinct URLs go into a 4 MiB tree (3 children, fmax 0.01)
// through 16 filter processes at once, then 100,000 URLs never inserted
// are checked. Each leaf must split at its bound whoever fills it: a
// writer that sent URLs up to its own stale view of a leaf's room put
// about 16 bounds' worth into a leaf before it split (12.5% false
// duplicates, and 6.9% of the URLs never printed, against 0.94% with one
// writer).
func TestDSBFInRedisManyWriters(t *testing.T) {
	t.Parallel()
	const writers, per, probes = 16, 150_000 / 16, 100_000
	tmp := t.TempDir()
	addr, _, _ := redisServer(t, t.TempDir())
	state := []string{"--backend", "redis://" + addr + "/0"}
	initFilter(t, state, []string{"--layout", "dsbf", "--size", "4MiB", "--children", "3", "--fmax", "0.01"})
	inputs := make([]string, writers)
	for w := range writers {
		inputs[w] = filepath.Join(tmp, fmt.Sprintf("in%d.txt", w))
		writeURLs(t, inputs[w], per, func(i int) int { return w*per + i })
	}
	outs := make([][]byte, writers)
	errs := make([]error, writers)
	stop := loadMachine(t)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			cmd := exec.Command(binary, append(append([]string{}, state...), "--redis-timeout", "120s", "filter", inputs[w])...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if outs[w], errs[w] = cmd.Output(); errs[w] != nil {
				errs[w] = fmt.Errorf("%v: %s", errs[w], stderr.String())
			}
		})
	}
	wg.Wait()
	stop()
	printed := map[string]int{}
	for w := range writers {
		if errs[w] != nil {
			t.Fatalf("writer %d: %v", w, errs[w])
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(outs[w]), "\n"), "\n") {
			printed[l]++
		}
	}
	var twice int
	for _, n := range printed {
		if n > 1 {
			twice++
		}
	}
	never := writers*per - len(printed) // distinct URLs called duplicates
	probe := filepath.Join(tmp, "probe.txt")
	writeURLs(t, probe, probes, func(i int) int { return 50_000_000 + i })
	marks, stderr, code := run(t, nil, append(append([]string{}, state...), "filter", "--dry-run", "--mark", probe)...)
	if code != 0 {
		t.Fatalf("dry run: %d %s", code, stderr)
	}
	falseDup := float64(strings.Count(marks, "dup\t")) / probes
	s := statsOf(t, state...)
	t.Logf("%d writers: %d URLs never printed, %d printed twice; %.2f%% of %d new URLs called duplicates; height %d, %d leaves, %d over bound",
		writers, never, twice, 100*falseDup, probes, s.Height, s.Leaves, *s.OverBound)
	if twice > 0 {
		t.Fatalf("%d URLs printed new twice", twice)
	}
	// One writer: 0.94% false duplicates; a local state with 16: 0.75%.
	if falseDup > 0.02 || float64(never)/float64(writers*per) > 0.02 {
		t.Fatalf("bound 0.01 broken: %.2f%% false duplicates, %d of %d distinct URLs never printed", 100*falseDup, never, writers*per)
	}
}
