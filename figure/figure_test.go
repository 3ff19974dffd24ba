package figure

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodTrace = `iter,seconds,objective,gap,step_size,passes
0,0.01,100,10,0.5,2
1,0.02,50,5,0.25,3
2,0.04,40,1,0,3
`

func TestReadTrace(t *testing.T) {
	tr, err := ReadTrace(strings.NewReader(goodTrace), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != 3 || tr.Name != "t.csv" {
		t.Fatalf("%d rows, name %q", tr.Len(), tr.Name)
	}
	for _, tc := range []struct {
		col  string
		want []float64
	}{
		{col: "iter", want: []float64{0, 1, 2}},
		{col: "seconds", want: []float64{0.01, 0.02, 0.04}},
		{col: "objective", want: []float64{100, 50, 40}},
		{col: "gap", want: []float64{10, 5, 1}},
		{col: "step_size", want: []float64{0.5, 0.25, 0}},
		{col: "passes", want: []float64{2, 3, 3}},
		{col: Excess, want: []float64{60, 10, 0}},
	} {
		got, err := tr.Column(tc.col)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %v, want %v", tc.col, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%s: %v, want %v", tc.col, got, tc.want)
			}
		}
	}
	if _, err := tr.Column("speed"); err == nil {
		t.Error("unknown column: no error")
	}
	// Columns in another order, an extra column and a BOM.
	other := "\ufeffpasses,extra,gap,iter,step_size,objective,seconds\n4,x,1,0,0,7,0.5\n"
	tr, err = ReadTrace(strings.NewReader(other), "o.csv")
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := tr.Column("objective"); f[0] != 7 {
		t.Errorf("objective %v", f)
	}
}

func TestReadTraceErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{name: "empty", in: "", want: "empty file"},
		{name: "header only", in: "iter,seconds,objective,gap,step_size,passes\n", want: "no rows"},
		{name: "missing column", in: "iter,seconds,objective,gap,passes\n0,1,2,3,4\n", want: `no column "step_size"`},
		{name: "duplicate column", in: "iter,iter,seconds,objective,gap,step_size,passes\n", want: "twice"},
		{name: "not a number", in: "iter,seconds,objective,gap,step_size,passes\n0,0.1,abc,1,0,1\n", want: `line 2, column "objective"`},
		{name: "NaN", in: "iter,seconds,objective,gap,step_size,passes\n0,0.1,1,NaN,0,1\n", want: `line 2, column "gap"`},
		{name: "fractional passes", in: "iter,seconds,objective,gap,step_size,passes\n0,0.1,1,1,0,1\n1,0.2,1,1,0,1.5\n", want: `line 3, column "passes"`},
		{name: "ragged", in: "iter,seconds,objective,gap,step_size,passes\n0,0.1,1\n", want: "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTrace(strings.NewReader(tc.in), "bad.csv")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "bad.csv") {
				t.Fatalf("err = %v, want one naming bad.csv and saying %q", err, tc.want)
			}
		})
	}
}

func FuzzReadTrace(f *testing.F) {
	f.Add(goodTrace)
	f.Add("iter,seconds,objective,gap,step_size,passes\n0,1e308,-1,0,0,0\n")
	f.Add("passes,gap\n\"1\n")
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := ReadTrace(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("error without the source: %v", err)
			}
			return
		}
		for _, c := range append(Columns, Excess) {
			v, err := tr.Column(c)
			if err != nil || len(v) != tr.Len() {
				t.Fatalf("column %s: %d values of %d, %v", c, len(v), tr.Len(), err)
			}
			for _, x := range v {
				if math.IsNaN(x) {
					t.Fatalf("column %s holds NaN", c)
				}
			}
		}
	})
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
