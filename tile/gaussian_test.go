package tile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestGaussianTile(t *testing.T) {
	const n, p = 23, 3
	x := randomFeatures(n, p, 2)
	g, err := NewGaussian(x, n, p, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	P := denseP(x, n, p, 0.7)
	buf := make([]float64, n*n)
	for _, r := range [][4]int{{0, n, 0, n}, {0, 5, 5, 23}, {3, 9, 3, 9}, {10, 11, 0, 23}} {
		r0, r1, c0, c1 := r[0], r[1], r[2], r[3]
		w := c1 - c0
		if err := g.Tile(buf, r0, r1, c0, c1); err != nil {
			t.Fatal(err)
		}
		for i := r0; i < r1; i++ {
			for j := c0; j < c1; j++ {
				// The kernel's exponential is negexp.Of, within 2 ulp
				// of the reference's math.Exp.
				got := buf[(i-r0)*w+j-c0]
				if want := P.At(i, j); math.Abs(got-want) > 0x1p-51*want {
					t.Fatalf("tile %v: P[%d][%d] = %v, want %v", r, i, j, got, want)
				}
				if r0 == c0 && got != buf[(j-c0)*w+i-r0] {
					t.Fatalf("diagonal tile %v not symmetric at %d,%d", r, i, j)
				}
			}
		}
	}
	for i := range n {
		if P.At(i, i) != 1 {
			t.Fatalf("P[%d][%d] = %v, want 1", i, i, P.At(i, i))
		}
	}
}

func TestNewGaussianErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		x     []float64
		n, p  int
		gamma float64
	}{
		{name: "zero gamma", x: make([]float64, 4), n: 2, p: 2, gamma: 0},
		{name: "negative gamma", x: make([]float64, 4), n: 2, p: 2, gamma: -1},
		{name: "NaN gamma", x: make([]float64, 4), n: 2, p: 2, gamma: math.NaN()},
		{name: "Inf gamma", x: make([]float64, 4), n: 2, p: 2, gamma: math.Inf(1)},
		{name: "size mismatch", x: make([]float64, 3), n: 2, p: 2, gamma: 1},
		{name: "no rows", x: nil, n: 0, p: 2, gamma: 1},
	} {
		if _, err := NewGaussian(tc.x, tc.n, tc.p, tc.gamma); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestMedianGamma(t *testing.T) {
	base := randomFeatures(200, 4, 3)
	g0, err := MedianGamma(base, 200, 4, 5000, 1)
	if err != nil {
		t.Fatal(err)
	}
	scaled := make([]float64, len(base))
	for i, v := range base {
		scaled[i] = 100 * v
	}
	// Duplicated rows: every row twice.
	dup := append(append([]float64(nil), base...), base...)
	for _, tc := range []struct {
		name string
		x    []float64
		n, p int
		want float64 // 0: only check positive and finite; -1: want 0, no scale
		tol  float64
	}{
		{name: "scale invariant", x: scaled, n: 200, p: 4, want: g0 / 1e4, tol: 1e-12},
		{name: "same seed same value", x: base, n: 200, p: 4, want: g0, tol: 0},
		{name: "duplicated rows", x: dup, n: 400, p: 4, want: 0},
		{name: "all rows equal", x: make([]float64, 40), n: 10, p: 4, want: -1},
		{name: "one row", x: []float64{1, 2}, n: 1, p: 2, want: -1},
		{name: "two rows", x: []float64{0, 0, 3, 4}, n: 2, p: 2, want: 1.0 / 25, tol: 1e-15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MedianGamma(tc.x, tc.n, tc.p, 5000, 1)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want < 0 {
				if got != 0 {
					t.Fatalf("gamma = %v, want 0 (no scale)", got)
				}
				return
			}
			if !(got > 0) || math.IsInf(got, 0) {
				t.Fatalf("gamma = %v, want positive and finite", got)
			}
			if tc.want != 0 && math.Abs(got-tc.want) > tc.tol*tc.want {
				t.Fatalf("gamma = %v, want %v", got, tc.want)
			}
		})
	}
	// In a data set of doubled rows a sampled pair is a row and its copy
	// with probability 1/(2n-1) only; those are left out, and the median
	// stays near that of the original rows.
	gd, _ := MedianGamma(dup, 400, 4, 5000, 1)
	if r := gd / g0; r < 0.8 || r > 1.25 {
		t.Errorf("duplicating rows moved gamma from %v to %v", g0, gd)
	}
}

func TestStandardize(t *testing.T) {
	// Columns: varying, constant 0.1 (inexact in binary), constant 0.
	x := []float64{
		1, 0.1, 0,
		2, 0.1, 0,
		4, 0.1, 0,
		9, 0.1, 0,
	}
	Standardize(x, 4, 3)
	var mean, sq float64
	for i := range 4 {
		mean += x[i*3]
		sq += x[i*3] * x[i*3]
		if x[i*3+1] != 0 || x[i*3+2] != 0 {
			t.Fatalf("row %d: constant columns became %v, %v; want 0", i, x[i*3+1], x[i*3+2])
		}
	}
	if math.Abs(mean) > 1e-15 || math.Abs(sq/4-1) > 1e-15 {
		t.Fatalf("standardized column has mean %v and variance %v", mean/4, sq/4)
	}
}

func TestMedianGammaOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scale float64
	}{
		{name: "huge features", scale: 1e200},
		{name: "tiny features", scale: 1e-160},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := randomFeatures(50, 2, 4)
			for i := range x {
				x[i] *= tc.scale
			}
			if g, err := MedianGamma(x, 50, 2, 1000, 1); err == nil {
				t.Fatalf("gamma = %v, want an out-of-range error", g)
			}
		})
	}
}

// TestStandardizeExtremeScales standardizes columns whose squares
// overflow or underflow a float64: each must come out as the column at
// scale 1 does, to the bit when the scale is a power of two.
func TestStandardizeExtremeScales(t *testing.T) {
	const n = 500
	base := make([]float64, n)
	for i := range base {
		base[i] = float64(i%7) + float64(i)/n // 500 distinct values
	}
	want := slices.Clone(base)
	Standardize(want, n, 1)
	for _, tc := range []struct {
		name  string
		scale float64
		exact bool // a power of two: the same bits
	}{
		{"2^1000", math.Ldexp(1, 1000), true},
		{"2^-1000", math.Ldexp(1, -1000), true},
		{"1e300", 1e300, false},
		{"1e160", 1e160, false},
		{"1e-300", 1e-300, false},
		{"-1e300", -1e300, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := make([]float64, n)
			for i, v := range base {
				x[i] = v * tc.scale
			}
			Standardize(x, n, 1)
			seen := map[float64]bool{}
			for i, v := range x {
				w := want[i]
				if tc.scale < 0 {
					w = -w
				}
				if tc.exact && v != w || math.Abs(v-w) > 1e-12 {
					t.Fatalf("row %d: %v, want %v (at scale 1)", i, v, w)
				}
				seen[v] = true
			}
			if len(seen) != n {
				t.Fatalf("%d distinct values after standardizing, want %d", len(seen), n)
			}
		})
	}
}

// TestStandardizeRow checks that StandardizeRow, with the Moments of x,
// gives each row of x the bits Standardize gives it, on columns of every
// scale, a constant column and one constant up to rounding.
func TestStandardizeRow(t *testing.T) {
	const n, p = 300, 6
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, n*p)
	for i := range n {
		u := rng.NormFloat64()
		row := x[i*p : (i+1)*p]
		row[0] = u
		row[1] = 1e300 * (1 + u/4)
		row[2] = 1e-300 * u
		row[3] = math.Ldexp(u, 900)
		row[4] = 42                     // constant: 0
		row[5] = 1 + 1e-15*float64(i%2) // no spread beyond rounding: 0
	}
	want := slices.Clone(x)
	Standardize(want, n, p)
	mean, sd := Moments(x, n, p)
	got := make([]float64, p)
	for i := range n {
		StandardizeRow(got, x[i*p:(i+1)*p], mean, sd)
		for q, v := range got {
			if w := want[i*p+q]; math.Float64bits(v) != math.Float64bits(w) {
				t.Fatalf("row %d, column %d: %v, Standardize gives %v (mean %v, sd %v)", i, q, v, w, mean[q], sd[q])
			}
		}
	}
	for q := range p {
		if math.IsInf(sd[q], 0) || math.IsNaN(sd[q]) || math.IsNaN(mean[q]) {
			t.Errorf("column %d: mean %v, sd %v, want finite", q, mean[q], sd[q])
		}
	}
}

// TestStandardizeWorkers checks that StandardizeWorkers gives the bits of
// Standardize for any number of workers, over more rows than a task.
func TestStandardizeWorkers(t *testing.T) {
	const n, p = 40000, 3
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, n*p)
	for i := range x {
		x[i] = rng.NormFloat64()*float64(1+i%p) + 7
	}
	want := slices.Clone(x)
	Standardize(want, n, p)
	for _, workers := range []int{0, 2, 3, 8} {
		got := slices.Clone(x)
		if err := StandardizeWorkers(got, n, p, workers); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d workers: other bits than Standardize's", workers)
		}
	}
}
