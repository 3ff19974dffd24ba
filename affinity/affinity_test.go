package affinity

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/tilefile"
	"github.com/ssnmf/ssnmf/tile"
)

func readSmall(t *testing.T) *store.Table {
	t.Helper()
	tab, err := store.ReadCSV(filepath.Join("testdata", "small.csv"), store.CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// denseP returns P of a built affinity by P·I, and checks it against the
// Gaussian kernel of x.
func denseP(t *testing.T, a fw.Affinity) []float64 {
	t.Helper()
	n := a.N()
	eye := make([]float64, n*n)
	for i := range n {
		eye[i*n+i] = 1
	}
	p := make([]float64, n*n)
	if _, err := a.Mul(context.Background(), p, eye, n, nil); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuildGaussian(t *testing.T) {
	for _, tc := range []struct {
		name        string
		gamma       float64
		standardize bool
		wantRule    string
	}{
		{name: "given", gamma: 0.5, wantRule: "given"},
		{name: "given standardized", gamma: 2, standardize: true, wantRule: "given"},
		{name: "auto", standardize: true, wantRule: "median"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := readSmall(t)
			raw := append([]float64(nil), tab.Features...)
			b, err := Build(context.Background(), tab, Spec{Gamma: tc.gamma, Standardize: tc.standardize, BlockSize: 5, Workers: 2, Name: "small.csv"})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if b.N() != tab.N || b.BlockSize != 5 || b.FromFile() {
				t.Errorf("N %d, block %d, from file %v", b.N(), b.BlockSize, b.FromFile())
			}
			if tc.gamma > 0 && b.Gamma != tc.gamma {
				t.Errorf("gamma %v, want %v", b.Gamma, tc.gamma)
			}
			if !(b.Gamma > 0) || !strings.Contains(b.GammaRule, tc.wantRule) {
				t.Errorf("gamma %v by rule %q, want one with %q", b.Gamma, b.GammaRule, tc.wantRule)
			}
			x := raw
			if tc.standardize {
				x = append([]float64(nil), raw...)
				tile.Standardize(x, tab.N, tab.P)
			}
			for i, v := range tab.Features {
				if v != x[i] {
					t.Fatalf("feature %d is %v, want %v (standardize=%v)", i, v, x[i], tc.standardize)
				}
			}
			n, p := tab.N, tab.P
			got := denseP(t, b)
			for i := range n {
				for j := range n {
					var d float64
					for c := range p {
						d += (x[i*p+c] - x[j*p+c]) * (x[i*p+c] - x[j*p+c])
					}
					if want := math.Exp(-b.Gamma * d); math.Abs(got[i*n+j]-want) > 1e-12 {
						t.Fatalf("P[%d][%d] = %v, want %v", i, j, got[i*n+j], want)
					}
				}
			}
		})
	}
}

func TestBuildTileFile(t *testing.T) {
	tab := readSmall(t)
	g, err := tile.NewGaussian(tab.Features, tab.N, tab.P, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "p.arrow")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := tilefile.Write(context.Background(), f, g, tilefile.Options{Block: 4, Meta: map[string]string{"gamma": "0.7"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	gen, err := Build(context.Background(), readSmall(t), Spec{Gamma: 0.7, BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tab  *store.Table
	}{{name: "alone"}, {name: "with features", tab: readSmall(t)}} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Build(context.Background(), tc.tab, Spec{File: name, BlockSize: 99, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if !b.FromFile() || b.BlockSize != 4 || b.Gamma != 0.7 || b.GammaRule != "tile file" {
				t.Errorf("from file %v, block %d, gamma %v (%s)", b.FromFile(), b.BlockSize, b.Gamma, b.GammaRule)
			}
			// The file was written by the portable kernel; the vector kernel,
			// where it runs, differs from it in the last bits.
			tol := 0.0
			if tile.DenseVectorKernel(tile.ISAAuto) {
				tol = 1e-14
			}
			got, want := denseP(t, b), denseP(t, gen)
			for i := range got {
				if math.Abs(got[i]-want[i]) > tol*math.Abs(want[i]) {
					t.Fatalf("entry %d: file %v, generated %v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestBuildGraphScale checks the scale of a kNN graph: the mass rule gives
// P the sum n²/k, a given scale multiplies the stored weights, and without
// k the graph is as stored; and the mass rule of the bandwidth.
func TestBuildGraphScale(t *testing.T) {
	sum := func(p []float64) (s float64) {
		for _, v := range p {
			s += v
		}
		return s
	}
	var unscaled float64
	for _, tc := range []struct {
		name      string
		spec      Spec
		wantScale float64 // 0: n²/(k·ΣP) with k = Clusters
		wantRule  string
	}{
		{name: "as stored without k", spec: Spec{}, wantScale: 1, wantRule: "as stored"},
		{name: "given", spec: Spec{Scale: 2.5, Clusters: 3}, wantScale: 2.5, wantRule: "given"},
		{name: "mass", spec: Spec{Clusters: 3}, wantRule: "mass"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := readSmall(t)
			spec := tc.spec
			spec.Standardize, spec.BlockSize, spec.Workers, spec.Name = true, 5, 2, "small.csv"
			spec.Graph = &graph.KNNOptions{Neighbors: 4, Weights: graph.SelfTuning}
			b, err := Build(context.Background(), tab, spec)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			n := float64(tab.N)
			mass := sum(denseP(t, b))
			if tc.wantScale == 1 {
				unscaled = mass
			}
			want := tc.wantScale
			if want == 0 {
				want = n * n / (3 * unscaled)
			}
			if math.Abs(b.Scale-want) > 1e-12*want || !strings.Contains(b.ScaleRule, tc.wantRule) {
				t.Errorf("scale %v (%s), want %v (%s)", b.Scale, b.ScaleRule, want, tc.wantRule)
			}
			if math.Abs(mass-want*unscaled) > 1e-9*mass {
				t.Errorf("ΣP = %v, want %v × %v", mass, want, unscaled)
			}
			if tc.wantRule == "mass" && math.Abs(mass-n*n/3) > 1e-9*mass {
				t.Errorf("ΣP = %v under the mass rule, want n²/k = %v", mass, n*n/3)
			}
		})
	}
	tab := readSmall(t)
	b, err := Build(context.Background(), tab, Spec{GammaRule: Mass, Clusters: 3, Standardize: true, BlockSize: 5, Workers: 1, Name: "small.csv"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	n := float64(tab.N)
	if mass := sum(denseP(t, b)); math.Abs(mass-n*n/3) > 1e-9*mass || !strings.HasPrefix(b.GammaRule, "mass") {
		t.Errorf("Gaussian by the mass rule: ΣP = %v (%s), want n²/k = %v", mass, b.GammaRule, n*n/3)
	}
}

// TestScaleToSizes checks the sizes rule on the dense P of a kNN graph: P
// sums to Σ_j n_j² of the sizes given, its entries keep their ratios, and a
// dense P refuses it.
func TestScaleToSizes(t *testing.T) {
	tab := readSmall(t)
	spec := Spec{Clusters: 3, Standardize: true, BlockSize: 5, Workers: 2, Name: "small.csv",
		Graph: &graph.KNNOptions{Neighbors: 4, Weights: graph.SelfTuning}}
	b, err := Build(context.Background(), tab, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	before := denseP(t, b)
	for _, sizes := range [][]int{{6, 3, 3}, {10, 1, 1}, {4, 4, 4}} {
		if err := b.ScaleToSizes(sizes, "test"); err != nil {
			t.Fatal(err)
		}
		var want float64
		for _, s := range sizes {
			want += float64(s * s)
		}
		after := denseP(t, b)
		var mass float64
		for i, v := range after {
			mass += v
			if r := v / before[i]; before[i] != 0 && math.Abs(r-after[0]/before[0]) > 1e-12*r {
				t.Fatalf("sizes %v: entry %d scaled by %v, entry 0 by %v", sizes, i, r, after[0]/before[0])
			}
		}
		if math.Abs(mass-want) > 1e-9*want || !strings.HasPrefix(b.ScaleRule, "sizes") {
			t.Errorf("sizes %v: ΣP = %v (%s), want Σn_j² = %v", sizes, mass, b.ScaleRule, want)
		}
	}
	dense, err := Build(context.Background(), readSmall(t), Spec{Gamma: 1, BlockSize: 5, Workers: 1, Name: "small.csv"})
	if err != nil {
		t.Fatal(err)
	}
	defer dense.Close()
	if err := dense.ScaleToSizes([]int{6, 6}, "test"); err == nil || !strings.Contains(err.Error(), "sparse") {
		t.Errorf("a dense P: %v, want an error naming a sparse P", err)
	}
	// A multiple of the rule's factor: P sums to F·Σ_j n_j², and the rule
	// says so; a dense P, an F <= 0 and an overflowing one are refused.
	if err := b.MultiplyScale(2.5); err != nil {
		t.Fatal(err)
	}
	var mass float64
	for _, v := range denseP(t, b) {
		mass += v
	}
	if math.Abs(mass-2.5*48) > 1e-9*mass || !strings.HasPrefix(b.ScaleRule, "2.5 × (sizes") {
		t.Errorf("2.5 × sizes {4, 4, 4}: ΣP = %v (%s), want %v", mass, b.ScaleRule, 2.5*48)
	}
	for _, f := range []float64{0, -1, math.NaN(), math.MaxFloat64} {
		if err := b.MultiplyScale(f); err == nil {
			t.Errorf("multiple %v: no error", f)
		}
	}
	if err := dense.MultiplyScale(2); err == nil || !strings.Contains(err.Error(), "sparse") {
		t.Errorf("a dense P's multiple: %v, want an error naming a sparse P", err)
	}
}

func TestBuildErrors(t *testing.T) {
	// Squared distances around 1e-322, subnormal: 1/(4·1e-322) overflows.
	huge, err := store.ParseCSV(strings.NewReader("x,y\n1e-161,0\n0,0\n2e-161,0\n"), "huge.csv", store.CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw300, err := store.ParseCSV(strings.NewReader("x,y\n1,0\n2,1e300\n3,2\n"), "raw.csv", store.CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tab  *store.Table
		spec Spec
		want string
	}{
		{name: "nothing", spec: Spec{}, want: "no features"},
		{name: "negative gamma", tab: readSmall(t), spec: Spec{Gamma: -1}, want: "gamma"},
		{name: "negative scale", tab: readSmall(t), spec: Spec{Scale: -1}, want: "scale"},
		{name: "mass rule without k", tab: readSmall(t), spec: Spec{GammaRule: Mass, Name: "small.csv"}, want: "k >= 2"},
		{name: "unknown rule", tab: readSmall(t), spec: Spec{GammaRule: Rule(7), Name: "small.csv"}, want: "Rule(7)"},
		{name: "missing file", tab: readSmall(t), spec: Spec{File: filepath.Join(t.TempDir(), "none.arrow")}, want: "none.arrow"},
		{name: "no bandwidth", tab: huge, spec: Spec{Name: "huge.csv"}, want: "huge.csv"},
		{name: "raw features overflow", tab: raw300, spec: Spec{Name: "raw.csv"}, want: `raw.csv: row 2, column "y": 1e+300 with -standardize=false`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Build(context.Background(), tc.tab, tc.spec)
			if err == nil {
				b.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to name %q", err, tc.want)
			}
		})
	}
	_, err = Build(context.Background(), huge, Spec{Name: "huge.csv"})
	var bwErr *BandwidthError
	if !errors.As(err, &bwErr) || bwErr.Name != "huge.csv" {
		t.Errorf("error %v is not a BandwidthError naming huge.csv", err)
	}
}

// FileKind tells a tile file from an edge list by content, and says
// when the file cannot be read.
func TestFileKind(t *testing.T) {
	dir := t.TempDir()
	tab := readSmall(t)
	g, err := tile.NewGaussian(tab.Features, tab.N, tab.P, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	tiles := filepath.Join(dir, "p.arrow")
	f, err := os.Create(tiles)
	if err != nil {
		t.Fatal(err)
	}
	if err := tilefile.Write(context.Background(), f, g, tilefile.Options{Block: 4}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	edges := filepath.Join(dir, "e.csv")
	if err := os.WriteFile(edges, []byte("src,dst,weight\n0,1,0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, format, kind string
		err                bool
	}{
		{tiles, "arrow", TileFile, false},
		{edges, "csv", EdgeList, false},
		{filepath.Join(dir, "missing.csv"), "", "", true},
	} {
		format, kind, err := FileKind(tc.path)
		if format != tc.format || kind != tc.kind || (err != nil) != tc.err {
			t.Errorf("FileKind(%s) = %q, %q, %v; want %q, %q, error %v", tc.path, format, kind, err, tc.format, tc.kind, tc.err)
		}
	}
}
