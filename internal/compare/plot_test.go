package compare

import (
	"bytes"
	"cmp"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// curve makes a result's curve: at each of inserted, hits of trials
// held-out URLs answered dup, and the formula's rate.
func curve(layout string, trials uint64, inserted, hits []uint64, theory []float64) Result {
	r := Result{Info: Info{Layout: layout}}
	for i, n := range inserted {
		r.Curve = append(r.Curve, Point{Inserted: n, Rate: Rate{Hits: hits[i], Trials: trials}, Theory: theory[i]})
	}
	return r
}

// A rate measured 0 is an upper bound at 1/held-out, not a point left
// out; the resolution floors are the held-out samples' 1/size; the axes
// span the data, floors included, and little more (no empty quarter).
func TestNewFigure(t *testing.T) {
	// The README's example, in short: the Bloom filter measures 0 until
	// its rate passes 1/100,000, its formula reaching far below.
	bloomLike := curve("bloom", 100_000, []uint64{4096, 65536, 196608, 1 << 20}, []uint64{0, 0, 1, 1800}, []float64{6.3e-16, 1.1e-7, 5e-6, 0.018})
	hashtable := curve("hashtable", 100_000, []uint64{4096, 65536, 196608, 1 << 20}, []uint64{37, 780, 2300, 11200}, []float64{4.9e-4, 7.8e-3, 0.023, 0.112})
	for _, tt := range []struct {
		name          string
		results       []Result
		layouts       []string
		measured      []plotter.XYs
		bounds        []plotter.XYs
		floors        []float64
		ymin, ymax    float64 // the data's range on the y axis
		xmin, xmax    float64
		formulaPoints []int
	}{
		{
			name: "zeros become bounds at 1/held-out", results: []Result{bloomLike},
			layouts:  []string{"bloom"},
			measured: []plotter.XYs{{{X: 196608, Y: 1e-5}, {X: 1 << 20, Y: 0.018}}},
			bounds:   []plotter.XYs{{{X: 4096, Y: 1e-5}, {X: 65536, Y: 1e-5}}},
			floors:   []float64{1e-5}, ymin: 6.3e-16, ymax: 0.018, xmin: 4096, xmax: 1 << 20, formulaPoints: []int{4},
		},
		{
			name: "the README's pair", results: []Result{bloomLike, hashtable},
			layouts:  []string{"bloom", "hashtable"},
			measured: []plotter.XYs{{{X: 196608, Y: 1e-5}, {X: 1 << 20, Y: 0.018}}, {{X: 4096, Y: 3.7e-4}, {X: 65536, Y: 7.8e-3}, {X: 196608, Y: 0.023}, {X: 1 << 20, Y: 0.112}}},
			bounds:   []plotter.XYs{{{X: 4096, Y: 1e-5}, {X: 65536, Y: 1e-5}}, nil},
			floors:   []float64{1e-5}, ymin: 6.3e-16, ymax: 0.112, xmin: 4096, xmax: 1 << 20, formulaPoints: []int{4, 4},
		},
		{
			name: "an exact set: bounds only, no formula, two sample sizes",
			results: []Result{
				curve("exact", 1000, []uint64{1000, 2000}, []uint64{0, 0}, []float64{0, 0}),
				curve("exact-small", 250, []uint64{1000, 2000}, []uint64{0, 0}, []float64{0, 0}),
			},
			layouts:  []string{"exact", "exact-small"},
			measured: []plotter.XYs{nil, nil},
			bounds:   []plotter.XYs{{{X: 1000, Y: 1e-3}, {X: 2000, Y: 1e-3}}, {{X: 1000, Y: 4e-3}, {X: 2000, Y: 4e-3}}},
			floors:   []float64{1e-3, 4e-3}, ymin: 1e-3, ymax: 4e-3, xmin: 1000, xmax: 2000, formulaPoints: []int{0, 0},
		},
		{
			name: "no curve, no trials: left out",
			results: []Result{{Info: Info{Layout: "none"}}, bloomLike,
				curve("asked-nothing", 0, []uint64{100}, []uint64{0}, []float64{0.5})},
			layouts:  []string{"bloom"},
			measured: []plotter.XYs{{{X: 196608, Y: 1e-5}, {X: 1 << 20, Y: 0.018}}},
			bounds:   []plotter.XYs{{{X: 4096, Y: 1e-5}, {X: 65536, Y: 1e-5}}},
			floors:   []float64{1e-5}, ymin: 6.3e-16, ymax: 0.018, xmin: 4096, xmax: 1 << 20, formulaPoints: []int{4},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFigure(tt.results)
			var layouts []string
			for i, s := range f.series {
				layouts = append(layouts, s.layout)
				if !slices.Equal(s.measured, tt.measured[i]) {
					t.Errorf("%s measured %v, want %v", s.layout, s.measured, tt.measured[i])
				}
				if !slices.Equal(s.bounds, tt.bounds[i]) {
					t.Errorf("%s bounds %v, want %v", s.layout, s.bounds, tt.bounds[i])
				}
				if len(s.formula) != tt.formulaPoints[i] {
					t.Errorf("%s formula %v, want %d points", s.layout, s.formula, tt.formulaPoints[i])
				}
			}
			if !slices.Equal(layouts, tt.layouts) {
				t.Errorf("series %v, want %v", layouts, tt.layouts)
			}
			if !slices.Equal(f.floors, tt.floors) {
				t.Errorf("floors %v, want %v", f.floors, tt.floors)
			}
			within(t, "y", f.y, tt.ymin, tt.ymax)
			within(t, "x", f.x, tt.xmin, tt.xmax)
		})
	}
}

// within checks that an axis holds the data from lo to hi, with a margin
// of at most a tenth of its decades (and a quarter decade) at each end.
func within(t *testing.T, axis string, s span, lo, hi float64) {
	t.Helper()
	below, above := math.Log10(lo/s.min), math.Log10(s.max/hi)
	slack := max(0.1*math.Log10(hi/lo), 0.25)
	if below <= 0 || above <= 0 || below > slack || above > slack {
		t.Errorf("%s axis %g to %g for data %g to %g: margins %.2g and %.2g decades, want (0, %.2g]", axis, s.min, s.max, lo, hi, below, above, slack)
	}
}

// Log axes mark only their range, label at most maxLabels decades
// (every decade on a narrow one), and always at least two ticks.
func TestLogTicks(t *testing.T) {
	for _, tt := range []struct {
		lo, hi float64
		label  func(float64) string
		want   []string // the labels, in order of value; nil: only count them
	}{
		{lo: 3400, hi: 1.2e6, label: countLabel, want: []string{"10k", "100k", "1M"}},
		{lo: 1e-5, hi: 1, label: rateLabel, want: []string{"1e-05", "0.0001", "0.001", "0.01", "0.1", "1"}},
		{lo: 1e-23, hi: 1, label: rateLabel, want: []string{"1e-21", "1e-18", "1e-15", "1e-12", "1e-09", "1e-06", "0.001", "1"}},
		{lo: 1.5e-16, hi: 0.2, label: rateLabel},
		{lo: 1e-300, hi: 0.5, label: rateLabel},
		{lo: 0.015, hi: 0.2, label: rateLabel, want: []string{"0.02", "0.05", "0.1", "0.2"}},
		{lo: 3.1, hi: 3.9, label: rateLabel, want: []string{"3.1", "3.9"}},
	} {
		ticks := logTicks{tt.label}.Ticks(tt.lo, tt.hi)
		slices.SortFunc(ticks, func(a, b plot.Tick) int { return cmp.Compare(a.Value, b.Value) })
		var labels []string
		for _, tk := range ticks {
			if tk.Value < tt.lo*(1-1e-12) || tk.Value > tt.hi*(1+1e-12) {
				t.Errorf("%g..%g: tick %g out of range", tt.lo, tt.hi, tk.Value)
			}
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if len(labels) < 2 || len(labels) > maxLabels {
			t.Errorf("%g..%g: %d labels %v, want 2 to %d", tt.lo, tt.hi, len(labels), labels, maxLabels)
		}
		if tt.want != nil && !slices.Equal(labels, tt.want) {
			t.Errorf("%g..%g: labels %v, want %v", tt.lo, tt.hi, labels, tt.want)
		}
	}
}

// The data take the plot's height but for the title and the x axis (no
// empty band above them) and the legend stands beside them, inside the
// image: for the README's kind of curves, for bounds only, and for ten
// layouts' legend.
func TestDrawLayout(t *testing.T) {
	bloomLike := curve("bloom", 100_000, []uint64{4096, 1 << 20}, []uint64{0, 1800}, []float64{6.3e-16, 0.018})
	var ten []Result
	for i := range 10 {
		r := bloomLike
		r.Layout = "layout-" + strconv.Itoa(i)
		ten = append(ten, r)
	}
	for name, results := range map[string][]Result{
		"curves": {bloomLike, curve("hashtable", 100_000, []uint64{4096, 1 << 20}, []uint64{37, 11200}, []float64{4.9e-4, 0.112})},
		"bounds": {curve("exact", 1000, []uint64{1000, 2000}, []uint64{0, 0}, []float64{0, 0})},
		"ten":    ten,
	} {
		c, err := draw.NewFormattedCanvas(plotWidth, plotHeight, "png")
		if err != nil {
			t.Fatal(err)
		}
		data, legend, err := newFigure(results).draw(draw.New(c))
		if err != nil {
			t.Fatal(err)
		}
		if h := data.Size().Y; h < 0.8*plotHeight {
			t.Errorf("%s: data %v tall, want at least 80%% of %v", name, h, plotHeight)
		}
		if w := data.Size().X; w < 0.55*plotWidth {
			t.Errorf("%s: data %v wide, want at least 55%% of %v", name, w, plotWidth)
		}
		if legend.Min.X <= data.Max.X || legend.Max.X > plotWidth || legend.Min.Y < data.Min.Y || legend.Max.Y > data.Max.Y {
			t.Errorf("%s: legend at %v, data at %v in %v by %v: want the legend right of the data, in the image", name, legend, data, plotWidth, plotHeight)
		}
	}
}

// The floor's label gives the held-out sample's size.
func TestFloorLabel(t *testing.T) {
	for floor, want := range map[float64]string{
		1e-5:       "resolution: 1 in 100,000 held-out",
		1.0 / 3:    "resolution: 1 in 3 held-out",
		1e-7:       "resolution: 1 in 10,000,000 held-out",
		1.0 / 4096: "resolution: 1 in 4,096 held-out",
	} {
		if got := floorLabel(floor); got != want {
			t.Errorf("floorLabel(%g) = %q, want %q", floor, got, want)
		}
	}
}

// A plot of measured curves is a real SVG and a real PNG, naming the
// layouts in its legend, the upper bounds and the floor; a plot of zeros
// only is their bounds; a plot of no curve, or to another format, is an
// error.
func TestPlot(t *testing.T) {
	res, err := Run(Options{Synthetic: 30_000, HeldOutSynthetic: 30_000, Memory: 16 << 10, Curve: true,
		Layouts: []string{"bloom-patent", "hashtable"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	svg, pngPath := filepath.Join(dir, "p.svg"), filepath.Join(dir, "p.png")
	for _, p := range []string{svg, pngPath} {
		if err := Plot(res, p); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(svg)
	for _, want := range []string{"<svg", "bloom-patent measured", "hashtable formula", "resolution: 1 in 30,000 held-out"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("SVG lacks %q:\n%.300s", want, b)
		}
	}
	f, _ := os.Open(pngPath)
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() < 300 {
		t.Errorf("PNG: %v", err)
	}
	if err := Plot(res, filepath.Join(dir, "p.gif")); !errors.Is(err, ErrInput) {
		t.Errorf("gif: %v", err)
	}
	exact, _ := Run(Options{Synthetic: 1000, HeldOutSynthetic: 1000, Layouts: []string{"exact"}, Curve: true})
	if err := Plot(exact, svg+"2.svg"); err != nil {
		t.Errorf("plot of zeros: %v", err)
	}
	if b, _ := os.ReadFile(svg + "2.svg"); !bytes.Contains(b, []byte("0 measured (&lt; 1/held-out)")) || !bytes.Contains(b, []byte("exact measured")) {
		t.Errorf("plot of zeros lacks its bounds' legend:\n%.300s", b)
	}
	plain, _ := Run(Options{Synthetic: 1000, HeldOutSynthetic: 1000, Layouts: []string{"hashtable"}})
	if err := Plot(plain, svg+"3.svg"); !errors.Is(err, ErrInput) {
		t.Errorf("plot without curves: %v", err)
	}
}
