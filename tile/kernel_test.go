package tile

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestKernelsMatchDense runs every pass through every kernel family this
// CPU runs (the portable one and, where built, the vectorized ones: avx512
// and avx2 on amd64, neon on arm64) in both precisions, against the
// materialized P in float64, across tile sizes that leave ragged edges and
// padding.
func TestKernelsMatchDense(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n, p, k int
		gamma   float64
		blocks  []int
	}{
		{name: "p=3/k=5", n: 157, p: 3, k: 5, gamma: 0.3, blocks: []int{1, 7, 16, 64, 0}},
		{name: "p=1/k=1", n: 45, p: 1, k: 1, gamma: 2, blocks: []int{13, 45}},
		{name: "p=16/k=17", n: 130, p: 16, k: 17, gamma: 0.05, blocks: []int{33, 100}},
		{name: "p=37/k=100", n: 90, p: 37, k: 100, gamma: 0.02, blocks: []int{20, 64}},
		{name: "p=4/k=70", n: 200, p: 4, k: 70, gamma: 0.5, blocks: []int{80}},
		{name: "p=17/k=3", n: 101, p: 17, k: 3, gamma: 0.04, blocks: []int{24, 101}},
	} {
		x := randomFeatures(tc.n, tc.p, uint64(tc.n))
		// Shift the features far from the origin: the vectorized kernel's
		// norms identity must not lose them to cancellation.
		for i := range x {
			x[i] += 40
		}
		W, s, S := randomW(tc.n, tc.k, 9)
		want := newPassWant(denseP(x, tc.n, tc.p, tc.gamma), W, s, S)
		for _, prec := range []Precision{Float64, Float32} {
			// Float32 rounds every value (relative error 6e-8) and, in the
			// vectorized kernel, computes distances in float32 from centred
			// features; P·W products are summed in float32 over at most
			// flushEvery terms. The sums here are relative to their largest
			// value.
			tol := 1e-12
			if prec == Float32 {
				tol = 2e-6
			}
			src, err := NewGaussianPrecision(x, tc.n, tc.p, tc.gamma, prec)
			if err != nil {
				t.Fatal(err)
			}
			for _, isa := range SupportedISAs() {
				for _, block := range tc.blocks {
					e := &Engine{Source: src, BlockSize: block, Workers: 3, ISA: isa}
					t.Run(fmt.Sprintf("%s/%s/block=%d", tc.name, e.Kernel(), block), func(t *testing.T) {
						checkPasses(t, e, want, tol)
					})
				}
			}
		}
	}
}

// vectorTileBound returns the bound on the relative error of an entry of
// the vectorized kernel's tiles against the portable kernel's that
// TestVectorTilesRoundingBound checks: for the entry of rows i and j, with
// S = gamma·(|x_i|² + |x_j|²) over the features centred on their mean
// (the vectorized kernels' norms identity loses up to a few roundings of
// S to cancellation) and u the unit roundoff of the precision,
//
//	float32: 3·10⁻⁷ + 1.1·(p+10)·u·S, u = 2⁻²⁴
//	float64: 3·10⁻¹⁵ + 1.1·(3p+12)·u·S, u = 2⁻⁵³
//
// The constant covers the vector exp (at most 2·10⁻⁷ and 2·10⁻¹⁵, see
// TestVectorExpError) and the portable float32 kernel's final rounding; the
// S term the roundings of the features and norms to the precision, of the
// dot product's p fused multiply-adds and of the exponent's sum, and, in
// float64, of the portable kernel's sum of p squared differences. abs is
// for the entries whose value is subnormal: the amd64 families' may be off
// by a few of its ulps; NEON's exp gives 0 below e^-87.33 (float32) or
// e^-708.39 (float64), where 2⁻¹²⁵ and 2⁻¹⁰²¹ bound the entry.
func vectorTileBound(isa ISA, prec Precision, p int, s float64) (rel, abs float64) {
	if prec == Float32 {
		abs = 0x1p-147
		if isa == ISANEON {
			abs = 0x1p-125
		}
		return 3e-7 + 1.1*float64(p+10)*0x1p-24*s, abs
	}
	abs = 0x1p-1070
	if isa == ISANEON {
		abs = 0x1p-1021
	}
	return 3e-15 + 1.1*float64(3*p+12)*0x1p-53*s, abs
}

// TestVectorTilesRoundingBound checks every entry of the tiles of every
// vectorized family this CPU runs (Engine.Tile) against the portable
// kernel's (Gaussian.Tile) within vectorTileBound, in both precisions: the
// whole matrix as one diagonal tile, an off-diagonal and a ragged tile, for
// sizes that are not multiples of the vectors and 1 to 17 features, with
// features far from the origin.
func TestVectorTilesRoundingBound(t *testing.T) {
	var fams []ISA
	for _, isa := range SupportedISAs() {
		if isa != ISAGo && DenseVectorKernel(isa) {
			fams = append(fams, isa)
		}
	}
	if len(fams) == 0 {
		t.Skipf("no vectorized dense kernel runs on this CPU (%s)", CPUFeatures())
	}
	for _, tc := range []struct {
		n, p  int
		gamma float64
	}{{37, 1, 2}, {45, 3, 0.3}, {70, 16, 0.05}, {53, 17, 0.2}} {
		x := randomFeatures(tc.n, tc.p, uint64(tc.n))
		for i := range x {
			x[i] += 40
		}
		// S of vectorTileBound for the rows' centred norms.
		mean := ColumnMeans(x, tc.n, tc.p)
		norm := make([]float64, tc.n)
		for i := range tc.n {
			for q, v := range x[i*tc.p : (i+1)*tc.p] {
				norm[i] += (v - mean[q]) * (v - mean[q])
			}
		}
		for _, prec := range []Precision{Float32, Float64} {
			src, err := NewGaussianPrecision(x, tc.n, tc.p, tc.gamma, prec)
			if err != nil {
				t.Fatal(err)
			}
			for _, isa := range fams {
				e := &Engine{Source: src, ISA: isa}
				t.Run(fmt.Sprintf("%s/n=%d/p=%d", e.Kernel(), tc.n, tc.p), func(t *testing.T) {
					var worst float64 // the largest error as a share of its bound
					for _, b := range [][4]int{{0, tc.n, 0, tc.n}, {0, tc.n / 2, tc.n / 2, tc.n}, {3, tc.n - 2, 5, tc.n - 1}} {
						r0, r1, c0, c1 := b[0], b[1], b[2], b[3]
						w := c1 - c0
						got, want := make([]float64, (r1-r0)*w), make([]float64, (r1-r0)*w)
						if err := e.Tile(got, r0, r1, c0, c1); err != nil {
							t.Fatal(err)
						}
						if err := src.Tile(want, r0, r1, c0, c1); err != nil {
							t.Fatal(err)
						}
						for k, v := range got {
							i, j := r0+k/w, c0+k%w
							rel, abs := vectorTileBound(isa, prec, tc.p, tc.gamma*(norm[i]+norm[j]))
							bound := rel*want[k] + abs
							if d := math.Abs(v - want[k]); d > bound {
								t.Fatalf("tile %v: P[%d][%d] = %v, portable %v: error %.3g above the bound %.3g", b, i, j, v, want[k], d, bound)
							} else {
								worst = max(worst, d/bound)
							}
						}
					}
					t.Logf("largest error %.2f of its bound", worst)
				})
			}
		}
	}
}

// randomW returns a random nonnegative n×k matrix and a random one-hot
// matrix with its column indices.
func randomW(n, k int, seed uint64) (W *mat.Dense, s []int32, S *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 4))
	W = mat.NewDense(n, k, nil)
	S = mat.NewDense(n, k, nil)
	s = make([]int32, n)
	for i := range n {
		for c := range k {
			W.Set(i, c, rng.Float64())
		}
		s[i] = int32(rng.IntN(k))
		S.Set(i, int(s[i]), 1)
	}
	return W, s, S
}

// TestKernelSameBitsAnyWorkers checks the determinism promise for every
// kernel and precision: a pass's outputs do not depend on the number of
// workers, bit for bit.
func TestKernelSameBitsAnyWorkers(t *testing.T) {
	const n, p, k = 301, 5, 12
	x := randomFeatures(n, p, 11)
	W, s, _ := randomW(n, k, 2)
	for _, prec := range []Precision{Float64, Float32} {
		src, _ := NewGaussianPrecision(x, n, p, 0.2, prec)
		for _, isa := range []ISA{ISAGo, ISAAuto} {
			run := func(workers int) []float64 {
				e := &Engine{Source: src, BlockSize: 48, Workers: workers, ISA: isa}
				pw, ps, rows := make([]float64, n*k), make([]float64, n*k), make([]float64, n)
				frob, err := e.Mul(context.Background(), pw, W.RawMatrix().Data, k, rows)
				if err != nil {
					t.Fatal(err)
				}
				if err := e.MulOneHot(context.Background(), ps, s, k); err != nil {
					t.Fatal(err)
				}
				return append(append(append(pw, ps...), rows...), frob)
			}
			one := run(1)
			for _, workers := range []int{2, 5} {
				got := run(workers)
				for i := range got {
					if math.Float64bits(got[i]) != math.Float64bits(one[i]) {
						t.Fatalf("%v kernel %v workers=%d: output %d = %v, one worker gave %v", prec, isa, workers, i, got[i], one[i])
					}
				}
			}
		}
	}
}

// TestColPanelsSameBits checks that the float32 passes give the same bits
// on a Gaussian whose whole blocks' column panels were packed for another
// block edge before (packed again), as on a fresh one, for every kernel:
// block edges 32, 64 and 32 again, with a last block that is not whole.
func TestColPanelsSameBits(t *testing.T) {
	const n, p, k = 300, 7, 9
	x := randomFeatures(n, p, 5)
	W, s, _ := randomW(n, k, 3)
	run := func(src Source, isa ISA, block int) []float64 {
		e := &Engine{Source: src, BlockSize: block, Workers: 2, ISA: isa}
		pw, ps := make([]float64, n*k), make([]float64, n*k)
		if _, err := e.Mul(context.Background(), pw, W.RawMatrix().Data, k, nil); err != nil {
			t.Fatal(err)
		}
		if err := e.MulOneHot(context.Background(), ps, s, k); err != nil {
			t.Fatal(err)
		}
		return append(pw, ps...)
	}
	for _, isa := range SupportedISAs() {
		reused, _ := NewGaussianPrecision(x, n, p, 0.3, Float32)
		for _, block := range []int{32, 64, 32} {
			fresh, _ := NewGaussianPrecision(x, n, p, 0.3, Float32)
			got, want := run(reused, isa, block), run(fresh, isa, block)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%v block %d: output %d = %v, a fresh Gaussian gave %v", isa, block, i, got[i], want[i])
				}
			}
		}
	}
}

// TestFloat32Values checks that float32 tiles hold float32 values: the
// portable kernel's tile values survive a round trip through float32.
func TestFloat32Values(t *testing.T) {
	const n, p = 40, 3
	g, err := NewGaussianPrecision(randomFeatures(n, p, 3), n, p, 0.4, Float32)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]float64, n*n)
	if err := g.Tile(buf, 0, n, 0, n); err != nil {
		t.Fatal(err)
	}
	for i, v := range buf {
		if float64(float32(v)) != v {
			t.Fatalf("value %d = %v is not a float32", i, v)
		}
	}
	if g.Precision() != Float32 {
		t.Fatalf("Precision() = %v", g.Precision())
	}
}

func TestParsePrecision(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Precision
		err  bool
	}{
		{in: "float64", want: Float64},
		{in: "float32", want: Float32},
		{in: "f32", want: Float32},
		{in: "64", want: Float64},
		{in: "float16", err: true},
		{in: "", err: true},
	} {
		got, err := ParsePrecision(tc.in)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("ParsePrecision(%q) = %v, %v", tc.in, got, err)
		}
		if !tc.err && got.String() != map[Precision]string{Float64: "float64", Float32: "float32"}[tc.want] {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
	if _, err := NewGaussianPrecision([]float64{0, 1}, 2, 1, 1, Precision(7)); err == nil {
		t.Error("NewGaussianPrecision accepted Precision(7)")
	}
}

func TestKernelName(t *testing.T) {
	g, _ := NewGaussianPrecision(randomFeatures(10, 2, 1), 10, 2, 1, Float32)
	if got := (&Engine{Source: g, ISA: ISAGo}).Kernel(); got != "go/float32" {
		t.Errorf("go Kernel() = %q, want go/float32", got)
	}
	// Auto and every family the CPU runs: the family's name where it has a
	// dense kernel.
	for _, isa := range append([]ISA{ISAAuto}, SupportedISAs()...) {
		got := (&Engine{Source: g, ISA: isa}).Kernel()
		want := "go/float32"
		if DenseVectorKernel(isa) {
			r, _ := isa.Resolve()
			want = r.String() + "/float32"
		}
		if got != want {
			t.Errorf("ISA %v: Kernel() = %q, want %q", isa, got, want)
		}
	}
	if cpuHas(ISAAVX2) && runtime.GOARCH == "amd64" {
		if got := (&Engine{Source: g, ISA: ISAAVX2}).Kernel(); got != "avx2/float32" {
			t.Errorf("avx2 Kernel() = %q, want avx2/float32", got)
		}
	}
	// A source that is not a Gaussian runs the portable kernel.
	if got := (&Engine{Source: &failingSource{Source: g, failAt: -1}}).Kernel(); !strings.HasPrefix(got, "go/") {
		t.Errorf("Kernel() of a wrapped source = %q, want go/...", got)
	}
}
