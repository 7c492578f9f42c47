// Command litbench runs the experiments of the design's literature
// (internal/literature) at the papers' sizes, prints markdown tables for
// docs/BENCHMARKS.md ("The design's literature, measured") and draws the
// plots into a directory (docs/img).
//
// Usage: go run ./scripts/litbench -img docs/img [-quick]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urldedupd/urldedupd/internal/compare"
	"github.com/urldedupd/urldedupd/internal/literature"
	"github.com/urldedupd/urldedupd/internal/state"
)

func main() {
	img := flag.String("img", "docs/img", "directory for the plots")
	quick := flag.Bool("quick", false, "smaller runs (a smoke test)")
	flag.Parse()
	scale := uint64(1)
	if *quick {
		scale = 10
	}
	check := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "litbench:", err)
			os.Exit(1)
		}
	}
	plot := func(name string, res []compare.Result) {
		check(compare.Plot(res, filepath.Join(*img, name)))
		fmt.Printf("\n![%s](img/%s)\n", name, name)
	}
	fmt.Printf("Machine: %s; `go run ./scripts/litbench -img docs/img`\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))

	// 1. The bitmap against n/2^32.
	tmp, err := os.MkdirTemp("", "litbench-")
	check(err)
	defer os.RemoveAll(tmp)
	res, err := compare.Run(compare.Options{Synthetic: int(10_000_000 / scale), HeldOutSynthetic: int(1_000_000 / scale),
		Layouts: []string{"bitmap"}, Curve: true, TempDir: tmp})
	check(err)
	fmt.Printf("\n### The bitmap's false duplicates against n/2^32\n\n| URLs inserted | measured | 95%% interval | 1 − (1 − 2^−32)^n |\n|---|---|---|---|\n")
	for _, p := range res[0].Curve {
		lo, hi := p.Rate.Interval()
		fmt.Printf("| %d | %.3g | [%.3g, %.3g] | %.3g |\n", p.Inserted, p.Rate.Value(), lo, hi, state.BitmapFalseDup(p.Inserted))
	}
	fmt.Printf("\nAt the end: %d of %d held-out URLs reported duplicates (%.4g; formula %.4g).\n",
		res[0].FalseDup.Hits, res[0].FalseDup.Trials, res[0].FalseDup.Value(), res[0].Theory)
	plot("bitmap-rate.svg", res)

	// 2. DSBF against a classic Bloom filter (the DSBF paper's Fig. 7).
	ab, err := literature.AgainstBloom(256<<10, 4, 8, 7, literature.Points(100_000, 2_000_000/scale, 4), int(1_000_000/scale), 1)
	check(err)
	fmt.Printf("\n### DSBF against a classic Bloom filter (the DSBF paper's Fig. 7)\n\n| URLs | %s | %s | %s |\n|---|---|---|---|\n", ab[0].Layout, ab[1].Layout, ab[2].Layout)
	for i := range ab[0].Curve {
		fmt.Printf("| %d |", ab[0].Curve[i].Inserted)
		for _, r := range ab {
			p := r.Curve[i]
			lo, hi := p.Rate.Interval()
			fmt.Printf(" %.3g [%.3g, %.3g] (formula %.3g) |", p.Rate.Value(), lo, hi, p.Theory)
		}
		fmt.Println()
	}
	plot("dsbf-vs-bloom.svg", ab)

	// 3. DSBF under fmax, 10× past its estimate.
	const fmax, estimate = 0.01, 200_000
	g, err := literature.UnderFMax(256<<10, fmax, estimate/scale, literature.Points(20_000/scale, 10*estimate/scale, 4), int(1_000_000/scale), 2)
	check(err)
	fmt.Printf("\n### DSBF under fmax = %g, 10× past its estimate\n\nPlanned for %d URLs (the paper's formulas 4–6): c = %d, k = %d, leaves of %d bits.\n\n| URLs | measured | 95%% interval | formula |\n|---|---|---|---|\n",
		fmax, g.Estimate, g.Params.C, g.Params.K, g.Params.LeafBits)
	for _, p := range g.Result.Curve {
		lo, hi := p.Rate.Interval()
		fmt.Printf("| %d | %.3g | [%.3g, %.3g] | %.3g |\n", p.Inserted, p.Rate.Value(), lo, hi, p.Theory)
	}
	lo, hi, cv := g.Balance()
	fmt.Printf("\nAt %d URLs: height %d, %d leaves (%d live), URLs per live leaf %d to %d, coefficient of variation %.4f; %d leaves past their bound.\n",
		g.Result.Curve[len(g.Result.Curve)-1].Inserted, g.Height, g.Leaves, len(g.Live), lo, hi, cv, g.Over)
	plot("dsbf-fmax.svg", []compare.Result{g.Result, g.FMax})

	// 4. MDBF against a classic Bloom filter (the MDBF paper's Figs. 2–4).
	trials := 20_000 / int(scale)
	const queries = 100
	fmt.Printf("\n### MDBF against a classic Bloom filter (the MDBF paper's Figs. 2–4)\n\n%d fresh filters per cell, %d queries each.\n", trials, queries)
	var curves []compare.Result
	cases := []literature.MDBFCase{{M: 150, K: 4}}
	for s := 1; s <= 4; s++ {
		cases = append(cases, literature.MDBFCase{S: s, N: 150, K: 4})
	}
	cases = append(cases, literature.MDBFCase{M: literature.MDBFCase{S: 4, N: 150, K: 4}.Bits(), K: 4})
	for _, c := range cases {
		r, err := literature.MDBFCurve(c, literature.Points(5, 60, 6), trials, queries, 3)
		check(err)
		curves = append(curves, r)
	}
	fmt.Printf("\nRate against URLs inserted (Fig. 2: S = 1..4 at N = 150, k = 4; with a Bloom filter of N bits and one of the MDBF's bits):\n\n| URLs |")
	for _, c := range curves {
		fmt.Printf(" %s |", c.Layout)
	}
	fmt.Printf("\n|---|")
	for range curves {
		fmt.Printf("---|")
	}
	fmt.Println()
	for i := range curves[0].Curve {
		fmt.Printf("| %d |", curves[0].Curve[i].Inserted)
		for _, c := range curves {
			p := c.Curve[i]
			fmt.Printf(" %.3g (%.3g) |", p.Rate.Value(), p.Theory)
		}
		fmt.Println()
	}
	plot("mdbf.svg", curves)
	table := func(title string, vary []int, mk func(v int) (literature.MDBFCase, literature.MDBFCase, literature.MDBFCase)) {
		fmt.Printf("\n%s, 30 URLs:\n\n| | MDBF S=4 | Bloom, same k and N | Bloom, same bits |\n|---|---|---|---|\n", title)
		for _, v := range vary {
			m, sameN, sameBits := mk(v)
			fmt.Printf("| %d |", v)
			for _, c := range []literature.MDBFCase{m, sameN, sameBits} {
				r, err := literature.MDBFRate(c, 30, trials, queries, 4)
				check(err)
				lo, hi := r.Interval()
				fmt.Printf(" %.3g [%.3g, %.3g] |", r.Value(), lo, hi)
			}
			fmt.Println()
		}
	}
	table("Fig. 3: N varies (S = 4, k = 4)", []int{80, 100, 150, 200, 300}, func(n int) (literature.MDBFCase, literature.MDBFCase, literature.MDBFCase) {
		m := literature.MDBFCase{S: 4, N: uint64(n), K: 4}
		return m, literature.MDBFCase{M: uint64(n), K: 4}, literature.MDBFCase{M: m.Bits(), K: 4}
	})
	table("Fig. 4: k varies (S = 4, N = 150)", []int{2, 3, 4, 5, 6}, func(k int) (literature.MDBFCase, literature.MDBFCase, literature.MDBFCase) {
		m := literature.MDBFCase{S: 4, N: 150, K: k}
		return m, literature.MDBFCase{M: 150, K: k}, literature.MDBFCase{M: m.Bits(), K: k}
	})
}
