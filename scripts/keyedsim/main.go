// Command keyedsim prints the keyed layout's false-duplicate and
// not-stored rates for a state, from the model (internal/keyed Predict) and
// measured on a table in memory filled with synthetic URLs:
//
//	go run ./scripts/keyedsim -state-mib 512 -measure-up-to 100000000 -queries 20000000
//	go run ./scripts/keyedsim -state-mib 8192 -loads 1000000000 -measure-up-to 0   # model only
//
// At each load it inserts the URLs up to it, then queries other URLs (a
// dry run: every duplicate among them is false) and prints the measured
// rate with its 95% interval next to the formula from the measured fill.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/signature"
)

func main() {
	stateMiB := flag.Int64("state-mib", 512, "state size in MiB (256 shards)")
	upTo := flag.Int("measure-up-to", 100_000_000, "measure at loads up to this many URLs (0: model only)")
	queries := flag.Int("queries", 10_000_000, "other URLs queried at each measured load")
	loadList := flag.String("loads", "10000000,100000000,134000000,200000000", "comma-separated loads (URLs inserted), ascending")
	flag.Parse()
	var loads []int
	for _, f := range strings.Split(*loadList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || (len(loads) > 0 && n <= loads[len(loads)-1]) {
			fmt.Fprintf(os.Stderr, "keyedsim: -loads %q: want positive counts in ascending order\n", *loadList)
			os.Exit(2)
		}
		loads = append(loads, n)
	}
	g, err := keyed.NewGeometry(*stateMiB << 20 / keyed.Shards)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("state %d MiB, %d slots\n\nmodel:\n%12s %12s %12s %12s\n", *stateMiB, g.Slots(), "URLs", "false dup", "not stored", "lost so far")
	for _, n := range loads {
		o := keyed.Predict(float64(n) / float64(uint64(g.Buckets())*keyed.Shards))
		fmt.Printf("%12d %12.3g %12.3g %12.3g\n", n, o.FalseDup(), o.NotStored(), o.Lost)
	}
	if *upTo == 0 {
		return
	}
	mem := make([]byte, g.StateBytes())
	shards := make([][]byte, keyed.Shards)
	for i := range shards {
		shards[i] = mem[int64(i)*g.ShardBytes : int64(i+1)*g.ShardBytes]
	}
	tab, err := keyed.NewTable(shards, false)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var key keyed.Key
	if key, err = keyed.NewKey(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	h := keyed.NewHasher(key, signature.Safe)
	fmt.Printf("\nmeasured (%d queries a load):\n%12s %10s %22s %12s %12s %12s %8s\n", *queries,
		"URLs", "false dups", "rate [95% interval]", "formula", "not stored", "lost so far", "seconds")
	const batch = 1024
	urls := make([][]byte, batch)
	for i := range urls {
		urls[i] = make([]byte, 0, 64)
	}
	locs, res := make([]keyed.Loc, batch), make([]keyed.Result, batch)
	run := func(family string, from, to int, dry bool) (c keyed.Counts) {
		for off := from; off < to; off += batch {
			k := min(batch, to-off)
			for i := range k {
				urls[i] = strconv.AppendInt(append(urls[i][:0], "http://www.example.com/"+family+"/catalog/product/itm?id="...), int64(off+i), 10)
			}
			h.LocateBatch(g, urls[:k], locs[:k])
			r := tab.DecideBatch(locs[:k], res[:k], dry)
			c.New, c.Dup, c.Full = c.New+r.New, c.Dup+r.Dup, c.Full+r.Full
		}
		return c
	}
	done := 0
	for _, n := range loads {
		if n > *upTo {
			break
		}
		start := time.Now()
		run("a", done, n, false)
		done = n
		c := run("q", 0, *queries, true)
		f := tab.Fill().Occupancy()
		lo, hi := interval95(c.Dup, uint64(*queries))
		fmt.Printf("%12d %10d %9.3g [%.2g, %.2g] %12.3g %12.3g %12.3g %8.1f\n", n, c.Dup, float64(c.Dup)/float64(*queries), lo, hi,
			f.FalseDup(), float64(c.Full)/float64(*queries), float64(tab.Counts().Full)/float64(n), time.Since(start).Seconds())
	}
}

// interval95 returns a 95% interval for k successes in n
// trials: exact bounds for k = 0 (rule of three), Wilson's score otherwise.
func interval95(k, n uint64) (lo, hi float64) {
	if k == 0 {
		return 0, 3.689 / float64(n) // −ln(0.025)/n
	}
	p, z := float64(k)/float64(n), 1.96
	d := 1 + z*z/float64(n)
	c := p + z*z/(2*float64(n))
	w := z * math.Sqrt(p*(1-p)/float64(n)+z*z/(4*float64(n)*float64(n)))
	return (c - w) / d, (c + w) / d
}
