package keyedwindow_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/keyedwindow"
	"github.com/urldedupd/urldedupd/internal/window"
)

// The multi-process test's fixed shape.
const (
	procArea    = keyed.MinTableShardBytes * 8 // 16 buckets a shard
	procURLs    = 4000
	procBatches = 40
	procBatch   = 100
	procG       = 3
)

func procSpec(pol window.Policy) window.Spec {
	return window.Spec{Epoch: epoch, Window: procG * time.Second, Generations: procG, Policy: pol}
}

// Four processes decide overlapping inputs on shard files mapped
// MAP_SHARED, under the lock file, with a clock they share through a
// mapped file and move on every 8th batch (by two generations, so every
// shard is swept whole at its next decision). Three of them are killed
// (SIGKILL, by themselves, through the table's hook) in the middle of
// advancing a shard: half way through a whole sweep, after the sweeps, and
// between the two header writes; each is started again where it stopped.
// Every URL is new exactly when the policy says, counted both ways.
func TestProcessesKilledMidRotation(t *testing.T) {
	for _, pol := range []window.Policy{window.FirstSeen, window.LastSeen} {
		t.Run(pol.String(), func(t *testing.T) {
			dir := t.TempDir()
			for i := range keyed.Shards {
				f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%02x", i)))
				if err == nil {
					err = f.Truncate(keyedwindow.ShardBytes(procArea))
				}
				if err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			if err := os.WriteFile(filepath.Join(dir, "clock"), make([]byte, 16), 0o644); err != nil {
				t.Fatal(err)
			}
			l, err := window.OpenFileLocker(filepath.Join(dir, "lock"), true)
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
			kills := []string{"1:2", "2:5", "3:3", ""} // step:occurrence
			outs := make([]bytes.Buffer, len(kills))
			killed := make([]int, len(kills))
			var wg sync.WaitGroup
			for p, kill := range kills {
				wg.Add(1)
				go func() {
					defer wg.Done()
					start := 0
					for run := 0; start < procBatches && run < 3; run++ {
						cmd := exec.Command(os.Args[0], "-test.run", "^TestHelperProcess$")
						cmd.Env = append(os.Environ(), "KEYEDWINDOW_DIR="+dir, "KEYEDWINDOW_PROC="+strconv.Itoa(p),
							"KEYEDWINDOW_START="+strconv.Itoa(start), "KEYEDWINDOW_POLICY="+pol.String())
						if run == 0 && kill != "" {
							cmd.Env = append(cmd.Env, "KEYEDWINDOW_KILL="+kill)
						}
						var out, stderr bytes.Buffer
						cmd.Stdout, cmd.Stderr = &out, &stderr
						err := cmd.Run()
						var ee *exec.ExitError
						if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
							killed[p]++
						} else if err != nil {
							t.Errorf("process %d: %v: %s", p, err, stderr.String())
							return
						}
						outs[p].Write(out.Bytes())
						start = batchesDone(out.Bytes(), start)
					}
					if start < procBatches {
						t.Errorf("process %d: %d of %d batches", p, start, procBatches)
					}
				}()
			}
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			byURL := map[int][]decision{}
			gens := map[int64]bool{}
			for p := range outs {
				for _, line := range strings.Split(outs[p].String(), "\n") {
					var d decision
					var res string
					if n, _ := fmt.Sscanf(line, "u %d %d %s", &d.url, &d.gen, &res); n == 3 {
						d.res = map[string]window.Result{"new": window.New, "dup": window.Dup, "full": window.Full}[res]
						byURL[d.url] = append(byURL[d.url], d)
						gens[d.gen] = true
					}
				}
			}
			var twice, lost, n int
			for _, ds := range byURL {
				twice += countTwice(ds, procG, pol)
				lost += countLost(ds, procG, pol)
				n += len(ds)
			}
			t.Logf("%d decisions of %d URLs in %d generations; killed %v; %d new twice within a window, %d lost", n, len(byURL), len(gens), killed, twice, lost)
			if killed[0]+killed[1]+killed[2] != 3 || killed[3] != 0 {
				t.Fatalf("killed %v, want one kill each of the first three", killed)
			}
			if n != len(kills)*procBatches*procBatch || len(gens) < 6 {
				t.Fatalf("%d decisions in %d generations", n, len(gens))
			}
			if twice+lost > 0 {
				t.Fatalf("%d URLs new twice within a window, %d lost", twice, lost)
			}
		})
	}
}

// batchesDone returns the batch after the last one out reports done.
func batchesDone(out []byte, start int) int {
	for _, line := range strings.Split(string(out), "\n") {
		if n, err := strconv.Atoi(strings.TrimPrefix(line, "b ")); err == nil && strings.HasPrefix(line, "b ") {
			start = n + 1
		}
	}
	return start
}

// TestHelperProcess is not a test: it is one process of
// TestProcessesKilledMidRotation, run with its settings in the
// environment.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("KEYEDWINDOW_DIR")
	if dir == "" {
		return
	}
	p, _ := strconv.Atoi(os.Getenv("KEYEDWINDOW_PROC"))
	start, _ := strconv.Atoi(os.Getenv("KEYEDWINDOW_START"))
	pol, _ := window.ParsePolicy(os.Getenv("KEYEDWINDOW_POLICY"))
	mapFile := func(name string, size int) []byte {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	shards := make([][]byte, keyed.Shards)
	for i := range shards {
		shards[i] = mapFile(fmt.Sprintf("%02x", i), int(keyedwindow.ShardBytes(procArea)))
	}
	clk := mapFile("clock", 16)
	ns, batches := (*int64)(unsafe.Pointer(&clk[0])), (*int64)(unsafe.Pointer(&clk[8]))
	lock, err := window.OpenFileLocker(filepath.Join(dir, "lock"), false)
	if err != nil {
		t.Fatal(err)
	}
	var killStep, killAt, seen int
	fmt.Sscanf(os.Getenv("KEYEDWINDOW_KILL"), "%d:%d", &killStep, &killAt)
	tab, err := keyedwindow.NewTable(procSpec(pol), shards, lock, keyedwindow.Options{
		Clock: func() time.Time { return epoch.Add(time.Duration(atomic.LoadInt64(ns))) },
		Hook: func(at keyedwindow.Step, first bool) {
			if first && int(at) == killStep {
				if seen++; seen == killAt {
					_ = unix.Kill(os.Getpid(), unix.SIGKILL)
				}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	geo := tab.Geometry()
	rng := rand.New(rand.NewPCG(uint64(p), 1))
	w := bufio.NewWriter(os.Stdout)
	locs, res, gens, ids := make([]keyed.Loc, procBatch), make([]window.Result, procBatch), make([]int64, procBatch), make([]int, procBatch)
	for b := range procBatches {
		for i := range procBatch {
			ids[i] = rng.IntN(procURLs/2) + (procURLs/2)*(i%2)
			locs[i] = geo.Locate(rand.New(rand.NewPCG(uint64(ids[i]), 7)).Uint64())
		}
		if b < start {
			continue // done by the run that was killed
		}
		if err := tab.DecideBatch(locs, res, gens); err != nil {
			t.Fatal(err)
		}
		for i := range procBatch {
			fmt.Fprintf(w, "u %d %d %v\n", ids[i], gens[i], res[i])
		}
		fmt.Fprintf(w, "b %d\n", b)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if n := atomic.AddInt64(batches, 1); n%8 == 0 {
			atomic.AddInt64(ns, int64(2*time.Second))
		}
	}
}
