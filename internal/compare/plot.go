package compare

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot draws every result's false-duplicate rate against the URLs inserted
// (Result.Curve, from Options.Curve), log-log: the measured rate as points
// and the layout's formula as a dashed line of the same colour. Rates of 0
// cannot be drawn on a log scale and are left out (the table has their
// intervals). path ends in .svg or .png.
func Plot(results []Result, path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("%w: plot %s: want a .svg or .png file", ErrInput, path)
	}
	p := plot.New()
	p.Title.Text = "False duplicates against URLs inserted"
	p.X.Label.Text = "distinct URLs inserted"
	p.Y.Label.Text = "chance a new URL is reported a duplicate"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: 1}, plot.LogTicks{Prec: 1}
	p.Legend.Top, p.Legend.Left = false, false // bottom right: the curves rise to the top right
	drawn := 0
	for i, r := range results {
		var measured, theory plotter.XYs
		for _, pt := range r.Curve {
			if v := pt.Rate.Value(); v > 0 {
				measured = append(measured, plotter.XY{X: float64(pt.Inserted), Y: v})
			}
			if pt.Theory > 0 {
				theory = append(theory, plotter.XY{X: float64(pt.Inserted), Y: pt.Theory})
			}
		}
		color := plotutil.Color(i)
		if len(measured) > 0 {
			s, err := plotter.NewScatter(measured)
			if err != nil {
				return err
			}
			s.Color, s.Shape = color, draw.CircleGlyph{}
			p.Add(s)
			p.Legend.Add(r.Layout+" measured", s)
			drawn++
		}
		if len(theory) > 1 {
			l, err := plotter.NewLine(theory)
			if err != nil {
				return err
			}
			l.Color, l.Dashes = color, []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(l)
			p.Legend.Add(r.Layout+" formula", l)
			drawn++
		}
	}
	if drawn == 0 {
		return fmt.Errorf("%w: plot %s: no rate above 0 to draw (run with Options.Curve, on more URLs or less memory)", ErrInput, path)
	}
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("compare: plot %s: %w", path, err)
	}
	return nil
}
