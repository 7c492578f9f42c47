// Command dsbfbench measures DSBF decisions the way the DSBF paper did:
// batches of BATCH URLs (300 in the paper) sent by WORKERS clients at
// once, against an existing state (a directory, Redis, or a Redis
// Cluster). URLs come from a file, one per line; they are signed before the
// clock starts. It prints URLs/s, the answers, and the tree's height and
// leaves afterwards.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

func main() {
	where := flag.String("state", "", "state: a directory, or redis://…, redis-cluster://…")
	urls := flag.String("urls", "", "file of URLs, one per line")
	batch := flag.Int("batch", 300, "URLs per batch")
	workers := flag.Int("workers", 4, "batches in flight at once")
	prefix := flag.String("prefix", "", "Redis key prefix (default urldedupd)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed part to this file")
	flag.Parse()
	if *where == "" || *urls == "" {
		fmt.Fprintln(os.Stderr, "usage: dsbfbench -state WHERE -urls FILE [-batch 300] [-workers 4]")
		os.Exit(2)
	}
	ctx := context.Background()
	st, err := state.Open(ctx, *where, &state.Options{Remote: state.RemoteOptions{Prefix: *prefix}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer st.Close()
	f, err := os.Open(*urls)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	signer := st.Signer()
	var sigs []signature.Signature
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		s, _ := signer.Sign(sc.Bytes())
		sigs = append(sigs, s)
	}
	f.Close()
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *cpuprofile != "" {
		pf, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	var next, dups atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	errs := make(chan error, *workers)
	for range *workers {
		wg.Go(func() {
			seen := make([]bool, *batch)
			for {
				i := int(next.Add(int64(*batch))) - *batch
				if i >= len(sigs) {
					return
				}
				b := sigs[i:min(i+*batch, len(sigs))]
				if err := st.Decide(ctx, b, seen[:len(b)], false); err != nil {
					errs <- err
					return
				}
				for _, s := range seen[:len(b)] {
					if s {
						dups.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	for err := range errs {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rep, err := st.Report(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d URLs in batches of %d, %d in flight: %.3f s, %.0f URLs/s; %d duplicates; height %d, %d leaves; %s\n",
		len(sigs), *batch, *workers, took.Seconds(), float64(len(sigs))/took.Seconds(), dups.Load(), rep.Height, rep.Leaves, rep)
}
