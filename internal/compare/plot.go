package compare

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot draws every result's false-duplicate rate against the URLs inserted
// (Result.Curve, from Options.Curve), log-log: the measured rate as points
// and the layout's formula as a dashed line of the same colour. A measured
// rate of 0 is drawn as what it is, an upper bound: a downward triangle at
// 1/held-out, the resolution of the held-out sample (one false answer among
// its URLs), which is drawn as a labelled dashed grey line. The axes span
// the data; the legend stands to the right of them. path ends in .svg or
// .png.
func Plot(results []Result, path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("%w: plot %s: want a .svg or .png file", ErrInput, path)
	}
	fig := newFigure(results)
	if len(fig.series) == 0 {
		return fmt.Errorf("%w: plot %s: no rate measured along the insertion to draw (run with Options.Curve)", ErrInput, path)
	}
	c, err := draw.NewFormattedCanvas(plotWidth, plotHeight, ext[1:])
	if err != nil {
		return fmt.Errorf("compare: plot %s: %w", path, err)
	}
	if _, _, err := fig.draw(draw.New(c)); err != nil {
		return fmt.Errorf("compare: plot %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("compare: plot %s: %w", path, err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("compare: plot %s: %w", path, err)
	}
	return f.Close()
}

// The image's size; the legend takes what it needs of its width, on the
// right.
const (
	plotWidth  = 10 * vg.Inch
	plotHeight = 5.5 * vg.Inch
)

// boundLabel is the legend's entry for the upper bounds.
const boundLabel = "0 measured (< 1/held-out)"

// figure is what Plot draws, worked out from the results (and nothing
// drawn yet, so that it can be checked value by value).
type figure struct {
	series []series
	floors []float64 // 1/held-out of each held-out sample size, ascending
	x, y   span      // the axes: the data, with a margin
}

// series is one layout's points and line.
type series struct {
	layout   string
	measured plotter.XYs // the rates measured above 0
	bounds   plotter.XYs // the rates measured 0: upper bounds at 1/held-out
	formula  plotter.XYs // the layout's formula, where above 0
}

// span is the range of a log axis.
type span struct{ min, max float64 }

// newFigure sorts each result's curve into measured points, upper bounds
// and formula, and spans the axes over all of it (floors included).
// Results without a curve are left out.
func newFigure(results []Result) figure {
	var f figure
	var xs, ys []float64
	for _, r := range results {
		s := series{layout: r.Layout}
		for _, pt := range r.Curve {
			if pt.Inserted == 0 || pt.Rate.Trials == 0 {
				continue // nothing inserted, or nothing asked: no rate
			}
			x, floor := float64(pt.Inserted), 1/float64(pt.Rate.Trials)
			if v := pt.Rate.Value(); v > 0 {
				s.measured = append(s.measured, plotter.XY{X: x, Y: v})
				ys = append(ys, v)
			} else {
				s.bounds = append(s.bounds, plotter.XY{X: x, Y: floor})
			}
			if pt.Theory > 0 {
				s.formula = append(s.formula, plotter.XY{X: x, Y: pt.Theory})
				ys = append(ys, pt.Theory)
			}
			if !slices.Contains(f.floors, floor) {
				f.floors = append(f.floors, floor)
			}
			xs = append(xs, x)
		}
		if len(s.measured)+len(s.bounds) > 0 {
			f.series = append(f.series, s)
		}
	}
	slices.Sort(f.floors)
	f.x, f.y = logSpan(xs), logSpan(append(ys, f.floors...))
	return f
}

// margin is the share of an axis' decades added at each of its ends, so
// that no point sits on the frame.
const margin = 0.04

// logSpan is the range of vs (all above 0) on a log axis, widened at each
// end by margin of its decades (at least a twentieth of a decade; a
// quarter of one around a single value).
func logSpan(vs []float64) span {
	if len(vs) == 0 {
		return span{1, 10}
	}
	lo, hi := math.Log10(slices.Min(vs)), math.Log10(slices.Max(vs))
	pad := max((hi-lo)*margin, 0.05)
	if hi == lo {
		pad = 0.25
	}
	return span{math.Pow(10, lo-pad), math.Pow(10, hi+pad)}
}

// maxLabels is the most decades a log axis labels; past it, every second,
// third, fifth, … decade is labelled (labelStep).
const maxLabels = 8

// logTicks marks the decades within a log axis' range, labelling at most
// maxLabels of them, evenly; over few decades it also marks 2…9 times
// each, and when fewer than two decades fall in the range it labels 2 and
// 5 times them too (or, failing that, every mark, or the ends).
type logTicks struct {
	label func(float64) string // a tick's label from its value
}

// Ticks implements plot.Ticker.
func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := int(math.Ceil(math.Log10(lo)-1e-9)), int(math.Floor(math.Log10(hi)+1e-9))
	decades := max(0, last-first+1)
	step := labelStep(decades)
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		tk := plot.Tick{Value: math.Pow10(e)}
		if e%step == 0 {
			tk.Label = t.label(tk.Value)
		}
		ticks = append(ticks, tk)
	}
	if decades > maxLabels {
		return ticks
	}
	var minor []plot.Tick
	for e := first - 1; e <= last; e++ {
		for m := 2.0; m <= 9; m++ {
			if v := m * math.Pow10(e); lo <= v && v <= hi {
				minor = append(minor, plot.Tick{Value: v})
			}
		}
	}
	if decades < 2 {
		for i, tk := range minor {
			if m := tk.Value / math.Pow10(int(math.Floor(math.Log10(tk.Value)+1e-9))); math.Abs(m-2) < 1e-9 || math.Abs(m-5) < 1e-9 {
				minor[i].Label = t.label(tk.Value)
			}
		}
	}
	ticks = append(ticks, minor...)
	if labelled(ticks) < 2 {
		for i := range ticks {
			ticks[i].Label = t.label(ticks[i].Value)
		}
	}
	if labelled(ticks) < 2 {
		ticks = append(ticks, plot.Tick{Value: lo, Label: t.label(lo)}, plot.Tick{Value: hi, Label: t.label(hi)})
	}
	return ticks
}

// labelStep is every how many decades an axis of decades labels: the
// least of 1, 2, 3, 5, 10, 20, 25, 50, 100 (or more) that labels at most
// maxLabels of them.
func labelStep(decades int) int {
	for _, step := range []int{1, 2, 3, 5, 10, 20, 25, 50, 100} {
		if (decades+step-1)/step <= maxLabels {
			return step
		}
	}
	return (decades + maxLabels - 1) / maxLabels
}

// labelled counts the ticks with a label.
func labelled(ticks []plot.Tick) int {
	n := 0
	for _, tk := range ticks {
		if tk.Label != "" {
			n++
		}
	}
	return n
}

// countLabel labels a count of URLs: 500, 20k, 1M, 1e+09.
func countLabel(v float64) string {
	switch {
	case v >= 1e9:
		return strconv.FormatFloat(v, 'g', 2, 64)
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// rateLabel labels a rate: 0.1, 0.002, 1e-05.
func rateLabel(v float64) string { return strconv.FormatFloat(v, 'g', 2, 64) }

// floorLabel names the resolution line of a held-out sample.
func floorLabel(floor float64) string {
	return fmt.Sprintf("resolution: 1 in %s held-out", grouped(uint64(math.Round(1/floor))))
}

// grouped writes n with thousands separators: 100,000.
func grouped(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// The marks' sizes: a series' glyphs are larger the earlier it is (up to
// maxNest sizes), so that series on the same values (the Bloom family, the
// upper bounds) stay visible around each other.
const (
	glyphRadius = 2.5 // points, of the last series
	glyphStep   = 1.2 // points more for each series before it
	maxNest     = 6
)

// draw draws the figure on c: the plot on the left, its legend beside it,
// and says where the data and the legend went. It draws the axes' labels
// itself: gonum makes room for them around the linear middle of a log
// axis, far from where it draws them, which left a quarter of the plot
// empty.
func (f figure) draw(c draw.Canvas) (data, legendArea vg.Rectangle, err error) {
	p, legend, err := f.plot()
	if err != nil {
		return data, legendArea, err
	}
	xsty, ysty := p.X.Label.TextStyle, p.Y.Label.TextStyle
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(10)
	legend.Padding = vg.Points(2)
	const gap = 12 // points between the plot and its legend
	width := legend.Rectangle(c).Size().X + vg.Points(gap)
	area := draw.Crop(c, labelRoom(ysty, yLabel), -width, labelRoom(xsty, xLabel), 0)
	p.Draw(area)
	data = p.DataCanvas(area).Rectangle
	c.FillText(xsty, vg.Point{X: (data.Min.X + data.Max.X) / 2, Y: c.Min.Y + xsty.FontExtents().Descent}, xLabel)
	x := c.Min.X + ysty.Height(yLabel) - ysty.FontExtents().Descent
	ysty.Rotation += math.Pi / 2
	c.FillText(ysty, vg.Point{X: x, Y: (data.Min.Y + data.Max.Y) / 2}, yLabel)
	lc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: c.Max.X - width + vg.Points(gap), Y: data.Min.Y},
		Max: vg.Point{X: c.Max.X, Y: data.Max.Y},
	}}
	legend.Draw(lc)
	return data, legend.Rectangle(lc), nil
}

// The axes' labels.
const (
	xLabel = "distinct URLs inserted"
	yLabel = "chance a new URL is reported a duplicate"
)

// labelRoom is the room an axis' label takes beside the axis.
func labelRoom(sty text.Style, label string) vg.Length {
	return sty.Height(label) + sty.FontExtents().Descent + vg.Points(4)
}

// plot builds the plot of the figure and its legend (drawn apart, beside
// the plot, so that it covers no data).
func (f figure) plot() (*plot.Plot, plot.Legend, error) {
	p := plot.New()
	legend := plot.NewLegend()
	p.Title.Text = "False duplicates against URLs inserted"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{countLabel}, logTicks{rateLabel}
	for _, floor := range f.floors {
		if err := f.addFloor(p, floor); err != nil {
			return nil, legend, err
		}
	}
	anyBound := false
	for i, s := range f.series {
		radius := vg.Points(glyphRadius + glyphStep*float64(min(len(f.series)-1-i, maxNest)))
		if err := s.add(p, &legend, plotutil.Color(i), radius); err != nil {
			return nil, legend, err
		}
		anyBound = anyBound || len(s.bounds) > 0
	}
	if anyBound {
		legend.Add(boundLabel, thumbnail{Color: color.Black, Radius: legendRadius, Shape: boundGlyph{}})
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = f.x.min, f.x.max, f.y.min, f.y.max
	return p, legend, nil
}

// add adds the series' points, bounds and formula to p, and its entries
// to legend.
func (s series) add(p *plot.Plot, legend *plot.Legend, col color.Color, radius vg.Length) error {
	var measured *plotter.Scatter // the legend's: a series of 0s only shows its bounds
	var formula plot.Thumbnailer
	if len(s.formula) > 1 {
		l, err := plotter.NewLine(s.formula)
		if err != nil {
			return err
		}
		l.Color, l.Dashes = col, []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		formula = l
	}
	if len(s.bounds) > 0 {
		b, err := plotter.NewScatter(s.bounds)
		if err != nil {
			return err
		}
		b.Color, b.Shape, b.Radius = col, boundGlyph{}, radius
		p.Add(b)
		measured = b
	}
	if len(s.measured) > 0 {
		m, err := plotter.NewScatter(s.measured)
		if err != nil {
			return err
		}
		m.Color, m.Shape, m.Radius = col, draw.CircleGlyph{}, radius
		p.Add(m)
		measured = m
	}
	if measured != nil {
		sty := measured.GlyphStyle
		sty.Radius = legendRadius
		legend.Add(s.layout+" measured", thumbnail(sty))
	}
	if formula != nil {
		legend.Add(s.layout+" formula", formula)
	}
	return nil
}

// addFloor draws the resolution floor across the x axis, labelled below
// its right end, where rates that grow with the URLs inserted leave room.
func (f figure) addFloor(p *plot.Plot, floor float64) error {
	l, err := plotter.NewLine(plotter.XYs{{X: f.x.min, Y: floor}, {X: f.x.max, Y: floor}})
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = color.Gray{Y: 110}, vg.Points(1), []vg.Length{vg.Points(8), vg.Points(4)}
	p.Add(l)
	t, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: f.x.max, Y: floor}}, Labels: []string{floorLabel(floor)}})
	if err != nil {
		return err
	}
	sty := &t.TextStyle[0]
	sty.Color, sty.XAlign, sty.YAlign, sty.Font.Size = l.Color, draw.XRight, draw.YTop, vg.Points(9)
	t.Offset = vg.Point{X: vg.Points(-4), Y: vg.Points(-3)}
	p.Add(t)
	return nil
}

// legendRadius is the size of the legend's glyphs, the same for every
// series.
const legendRadius = vg.Length(3.5)

// thumbnail is a glyph in the legend.
type thumbnail draw.GlyphStyle

// Thumbnail implements plot.Thumbnailer.
func (t thumbnail) Thumbnail(c *draw.Canvas) { c.DrawGlyph(draw.GlyphStyle(t), c.Center()) }

// boundGlyph draws the outline of a downward triangle: the rate is below
// the point. The triangle reaches 1.4 times the radius from the point, to
// weigh about as much as a disc of the radius.
type boundGlyph struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (boundGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)})
	r := 1.4 * sty.Radius
	var path vg.Path
	path.Move(vg.Point{X: pt.X, Y: pt.Y - r})
	path.Line(vg.Point{X: pt.X - r*0.866, Y: pt.Y + r/2})
	path.Line(vg.Point{X: pt.X + r*0.866, Y: pt.Y + r/2})
	path.Close()
	c.Stroke(path)
}
