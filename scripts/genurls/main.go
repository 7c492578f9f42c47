// Command genurls writes a deterministic file of URL lines for benchmarks:
// about 55 bytes a line, a chosen share of them repeats of earlier lines.
// Line ids count up from -start, so that with -dup 0 the runs -n N and
// -start N make disjoint sets of distinct URLs (scripts/bench-capacity.sh).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
)

func main() {
	n := flag.Int("n", 10_000_000, "number of lines")
	dup := flag.Float64("dup", 0.3, "share of lines that repeat an earlier line")
	seed := flag.Uint64("seed", 1, "random seed")
	start := flag.Int("start", 0, "id of the first distinct line (ids appear in the URL path, so distinct ids make distinct URLs)")
	flag.Parse()
	rng := rand.New(rand.NewPCG(*seed, 42))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	paths := []string{"products", "news/world", "blog/2026", "static/img", "search", "user/profile"}
	distinct := 0
	for i := 0; i < *n; i++ {
		id := *start + distinct
		if distinct > 0 && rng.Float64() < *dup {
			id = *start + rng.IntN(distinct)
		} else {
			distinct++
		}
		// The same id always makes the same line.
		h := uint64(id)*0x9e3779b97f4a7c15 + *seed
		fmt.Fprintf(w, "http://site%d.example.com/%s/%d.html?id=%d\n",
			h%5000, paths[h%uint64(len(paths))], id, h%1000003)
	}
}
