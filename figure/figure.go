// Package figure draws convergence figures from solver traces: it plots any
// two columns of traces (package trace: the CSV files that "ssnmf solve
// -trace" and the scripts write) against each other, one curve per trace
// and one panel per group of traces, on linear or logarithmic axes, as PNG
// or SVG with gonum.org/v1/plot. The paper's Fig. 2 (log seconds against
// log objective) and Fig. 3 (log seconds against log(f - f*)) are such
// figures.
package figure

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/trace"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Series is one curve: points (X[i], Y[i]) joined in order.
type Series struct {
	Label string
	X, Y  []float64
}

// Panel is one plot of a figure.
type Panel struct {
	Title          string
	XLabel, YLabel string
	LogX, LogY     bool // logarithmic axes; points with a coordinate <= 0 are left out
	Series         []Series
}

// Figure is a grid of panels, filled row by row.
type Figure struct {
	Panels []Panel
	Cols   int       // panels per row; all in one row if 0
	Width  vg.Length // of one panel; 10 cm if 0
	Height vg.Length // of one panel; 8 cm if 0
}

// TraceSeries returns the curve of column y against column x of a trace
// (each one of trace.Columns or trace.Excess), labeled with the trace's
// name.
func TraceSeries(t *trace.Trace, x, y string) (Series, error) {
	xs, err := t.Column(x)
	if err != nil {
		return Series{}, err
	}
	ys, err := t.Column(y)
	if err != nil {
		return Series{}, err
	}
	return Series{Label: t.Name, X: xs, Y: ys}, nil
}

// Format returns the image format of a file by its extension, "png" or
// "svg", or an error naming the path; "svg", which is text, for an output
// written in place (store.WrittenInPlace) whose name has neither.
func Format(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		return "png", nil
	case ".svg":
		return "svg", nil
	}
	if store.WrittenInPlace(path) { // /dev/null, a terminal, a named pipe
		return "svg", nil
	}
	return "", fmt.Errorf("%s: unknown image format, want .png or .svg", path)
}

// Save writes the figure to path, as PNG or SVG by its extension; the file
// appears only once it is completely written.
func (f *Figure) Save(path string) error {
	format, err := Format(path)
	if err != nil {
		return err
	}
	if err := store.WriteFileAtomic(path, func(w io.Writer) error { return f.Render(w, format) }); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// palette holds the curves' colors: distinguishable, and the same curve
// index has the same color in every panel.
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, // purple
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
	color.RGBA{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff}, // pink
	color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, // gray
}

// Render draws the figure to w in the given format, "png" or "svg".
func (f *Figure) Render(w io.Writer, format string) error {
	if len(f.Panels) == 0 {
		return fmt.Errorf("figure: no panels")
	}
	cols := f.Cols
	if cols <= 0 || cols > len(f.Panels) {
		cols = len(f.Panels)
	}
	rows := (len(f.Panels) + cols - 1) / cols
	pw, ph := f.Width, f.Height
	if pw <= 0 {
		pw = 10 * vg.Centimeter
	}
	if ph <= 0 {
		ph = 8 * vg.Centimeter
	}
	width, height := pw*vg.Length(cols), ph*vg.Length(rows)

	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for i := range f.Panels {
		p, err := f.Panels[i].plot()
		if err != nil {
			return err
		}
		plots[i/cols][i%cols] = p
	}

	var canvas vg.CanvasWriterTo
	switch format {
	case "png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(150), vgimg.UseBackgroundColor(color.White))}
	case "svg":
		canvas = vgsvg.New(width, height)
	default:
		return fmt.Errorf("figure: unknown format %q, want png or svg", format)
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter, PadY: vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	canvases := plot.Align(plots, tiles, dc)
	for r := range plots {
		for c, p := range plots[r] {
			if p != nil {
				p.Draw(canvases[r][c])
			}
		}
	}
	_, err := canvas.WriteTo(w)
	return err
}

// plot builds the gonum plot of a panel.
func (pn *Panel) plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pn.Title
	p.X.Label.Text = pn.XLabel
	p.Y.Label.Text = pn.YLabel
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i, s := range pn.Series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("figure: panel %q, series %q: %d x values and %d y values", pn.Title, s.Label, len(s.X), len(s.Y))
		}
		var xy plotter.XYs
		for j := range s.X {
			x, y := s.X[j], s.Y[j]
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) ||
				(pn.LogX && x <= 0) || (pn.LogY && y <= 0) {
				continue
			}
			xy = append(xy, plotter.XY{X: x, Y: y})
			xmin, xmax = min(xmin, x), max(xmax, x)
			ymin, ymax = min(ymin, y), max(ymax, y)
		}
		if len(xy) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, fmt.Errorf("figure: panel %q, series %q: %w", pn.Title, s.Label, err)
		}
		col := palette[i%len(palette)]
		line.Color = col
		line.Width = vg.Points(1.2)
		line.Dashes = dashes(i / len(palette))
		points.Color = col
		points.Radius = vg.Points(1.5)
		points.Shape = shape(i)
		p.Add(line, points)
		if s.Label != "" {
			p.Legend.Add(s.Label, line, points)
		}
	}
	if xmin > xmax { // nothing to draw: an empty frame
		xmin, xmax, ymin, ymax = 1, 10, 1, 10
	}
	setAxis(&p.X, xmin, xmax, pn.LogX)
	setAxis(&p.Y, ymin, ymax, pn.LogY)
	return p, nil
}

// setAxis sets an axis's range and scale, widening a range of one value so
// that it is not empty.
func setAxis(a *plot.Axis, lo, hi float64, log bool) {
	if lo == hi {
		if log {
			lo, hi = lo/2, hi*2
		} else {
			d := max(math.Abs(lo)/2, 1)
			lo, hi = lo-d, hi+d
		}
	}
	a.Min, a.Max = lo, hi
	if log {
		a.Scale = plot.LogScale{}
		a.Tick.Marker = logTicks{}
	}
}

// logTicks marks the powers of ten of a log axis and, when the range spans
// less than two decades, also 2 and 5 times them, so that a short range
// still has labels. A range too short for two of those (an objective that
// falls by 7%) gets gonum's evenly spaced ticks instead.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) {
		return nil
	}
	mults := []float64{1}
	if math.Log10(hi/lo) < 2 {
		mults = []float64{1, 2, 5}
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for _, m := range mults {
			v := m * base
			if v < lo || v > hi {
				continue
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
		}
		for m := 2.0; m < 10; m++ {
			if v := m * base; v >= lo && v <= hi && !(len(mults) > 1 && (m == 2 || m == 5)) {
				ticks = append(ticks, plot.Tick{Value: v}) // minor
			}
		}
	}
	labels := 0
	for _, t := range ticks {
		if t.Label != "" {
			labels++
		}
	}
	if labels < 2 && hi > lo {
		ticks = plot.DefaultTicks{}.Ticks(lo, hi)
		for i, t := range ticks {
			if t.Label != "" {
				ticks[i].Label = fmt.Sprintf("%g", t.Value) // as above, not "350000.00"
			}
		}
	}
	return ticks
}

func dashes(i int) []vg.Length {
	switch i % 3 {
	case 1:
		return []vg.Length{vg.Points(4), vg.Points(2)}
	case 2:
		return []vg.Length{vg.Points(1), vg.Points(2)}
	}
	return nil
}

func shape(i int) draw.GlyphDrawer {
	switch i % 4 {
	case 1:
		return draw.SquareGlyph{}
	case 2:
		return draw.TriangleGlyph{}
	case 3:
		return draw.CrossGlyph{}
	}
	return draw.CircleGlyph{}
}
