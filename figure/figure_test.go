package figure

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/trace"
)

func TestTraceSeries(t *testing.T) {
	tr, err := trace.Read(strings.NewReader("iter,seconds,objective,gap,step_size,passes\n0,0.01,100,10,0.5,2\n1,0.02,40,1,0,3\n"), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		x, y   string
		wantX  []float64
		wantY  []float64
		errStr string
	}{
		{x: trace.Passes, y: trace.Objective, wantX: []float64{2, 3}, wantY: []float64{100, 40}},
		{x: trace.Seconds, y: trace.Excess, wantX: []float64{0.01, 0.02}, wantY: []float64{60, 0}},
		{x: "speed", y: trace.Gap, errStr: `"speed"`},
		{x: trace.Iter, y: "loss", errStr: `"loss"`},
	} {
		s, err := TraceSeries(tr, tc.x, tc.y)
		if tc.errStr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errStr) {
				t.Errorf("%s against %s: err = %v, want one naming %s", tc.y, tc.x, err, tc.errStr)
			}
			continue
		}
		if err != nil || s.Label != "t.csv" || !slices.Equal(s.X, tc.wantX) || !slices.Equal(s.Y, tc.wantY) {
			t.Errorf("%s against %s: %+v, %v; want %v, %v", tc.y, tc.x, s, err, tc.wantX, tc.wantY)
		}
	}
}

func testFigure() *Figure {
	return &Figure{Cols: 2, Panels: []Panel{
		{Title: "log-log", XLabel: "seconds", YLabel: "f", LogX: true, LogY: true, Series: []Series{
			{Label: "a", X: []float64{0, 0.1, 1, 10}, Y: []float64{100, 50, 0, 20}}, // points <= 0 left out
			{Label: "b", X: []float64{0.2, 2}, Y: []float64{30, 30}},
		}},
		{Title: "linear", XLabel: "iter", YLabel: "gap", Series: []Series{{Label: "c", X: []float64{0, 1, 2}, Y: []float64{-1, 0, math.NaN()}}}},
		{Title: "one point", LogX: true, LogY: true, Series: []Series{{Label: "d", X: []float64{3}, Y: []float64{3}}}},
		{Title: "empty", LogX: true, LogY: true, Series: []Series{{Label: "e", X: []float64{0}, Y: []float64{0}}}},
	}}
}

func TestRenderPNG(t *testing.T) {
	var b bytes.Buffer
	if err := testFigure().Render(&b, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	// Two columns and two rows of 10 cm × 8 cm panels at 150 dpi.
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	if math.Abs(float64(w)-2*10/2.54*150) > 2 || math.Abs(float64(h)-2*8/2.54*150) > 2 {
		t.Errorf("image %d×%d", w, h)
	}
}

func TestRenderSVG(t *testing.T) {
	var b bytes.Buffer
	if err := testFigure().Render(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"<svg", "log-log", "linear", "seconds"} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	if err := (&Figure{}).Render(new(bytes.Buffer), "png"); err == nil {
		t.Error("no panels: no error")
	}
	if err := testFigure().Render(new(bytes.Buffer), "gif"); err == nil {
		t.Error("gif: no error")
	}
	bad := &Figure{Panels: []Panel{{Series: []Series{{X: []float64{1, 2}, Y: []float64{1}}}}}}
	if err := bad.Render(new(bytes.Buffer), "svg"); err == nil {
		t.Error("ragged series: no error")
	}
}

func TestSave(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"f.png", "f.SVG"} {
		path := filepath.Join(dir, name)
		if err := testFigure().Save(path); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := testFigure().Save(filepath.Join(dir, "f.jpg")); err == nil || !strings.Contains(err.Error(), "f.jpg") {
		t.Errorf("jpg: err = %v", err)
	}
	if err := testFigure().Save(filepath.Join(dir, "missing", "f.png")); err == nil {
		t.Error("missing directory: no error")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries, want the 2 figures and no temporary files", len(entries))
	}
}

func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi     float64
		wantLabels []string
	}{
		{lo: 0.05, hi: 200, wantLabels: []string{"0.1", "1", "10", "100"}},
		{lo: 1500, hi: 6000, wantLabels: []string{"2000", "5000"}},
		// Too short for two of 1, 2, 5 times a power of ten: even ticks.
		{lo: 349971, hi: 376889, wantLabels: []string{"350000", "375000"}},
		{lo: 3, hi: 3, wantLabels: nil},
	} {
		var labels []string
		for _, tk := range (logTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Value < tc.lo || tk.Value > tc.hi {
				t.Errorf("[%v, %v]: tick %v outside", tc.lo, tc.hi, tk.Value)
			}
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if strings.Join(labels, " ") != strings.Join(tc.wantLabels, " ") {
			t.Errorf("[%v, %v]: labels %v, want %v", tc.lo, tc.hi, labels, tc.wantLabels)
		}
	}
}
