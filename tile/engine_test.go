package tile

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomFeatures returns n×p features in a few clusters, so P has both
// large and tiny entries.
func randomFeatures(n, p int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n*p)
	for i := range n {
		c := float64(rng.IntN(3))
		for q := range p {
			x[i*p+q] = 2*c + rng.NormFloat64()
		}
	}
	return x
}

// randomSlice returns n values of draw, drawn in order.
func randomSlice[T any](n int, draw func() T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = draw()
	}
	return s
}

// denseP materializes the Gaussian kernel directly from its definition.
func denseP(x []float64, n, p int, gamma float64) *mat.Dense {
	P := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			var d float64
			for q := range p {
				t := x[i*p+q] - x[j*p+q]
				d += float64(t * t)
			}
			P.Set(i, j, math.Exp(-gamma*d))
		}
	}
	return P
}

func maxRelDiff(got, want []float64) float64 {
	var num, den float64
	for i := range got {
		num = math.Max(num, math.Abs(got[i]-want[i]))
		den = math.Max(den, math.Abs(want[i]))
	}
	if den == 0 {
		return num
	}
	return num / den
}

// passWant holds a pass input and what the passes over the materialized P
// give for it.
type passWant struct {
	k      int
	w      []float64 // W, n×k
	s      []int32   // the classes of the one-hot S
	pw, ps []float64 // P·W and P·S, n×k
	rows   []float64 // the row sums of P
	frob   float64   // ||P||_F^2
}

// newPassWant computes the passes' results over P for W and the one-hot S
// (classes s) by dense products.
func newPassWant(P, W *mat.Dense, s []int32, S *mat.Dense) passWant {
	n, k := W.Dims()
	var PW, PS mat.Dense
	PW.Mul(P, W)
	PS.Mul(P, S)
	want := passWant{k: k, w: W.RawMatrix().Data, s: s, pw: PW.RawMatrix().Data, ps: PS.RawMatrix().Data, rows: make([]float64, n)}
	for i := range n {
		for j := range n {
			want.rows[i] += P.At(i, j)
			want.frob += P.At(i, j) * P.At(i, j)
		}
	}
	return want
}

// checkPasses runs Mul (with row sums), MulOneHot and Stats on e and
// compares them with want to relative tolerance tol; Stats must give
// Mul's ||P||_F^2 exactly.
func checkPasses(t *testing.T, e *Engine, want passWant, tol float64) {
	t.Helper()
	ctx := context.Background()
	n, k := len(want.rows), want.k
	y := make([]float64, n*k)
	rows := make([]float64, n)
	frob, err := e.Mul(ctx, y, want.w, k, rows)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxRelDiff(y, want.pw); d > tol {
		t.Errorf("P·W: max relative difference %g", d)
	}
	if d := maxRelDiff(rows, want.rows); d > tol {
		t.Errorf("row sums: max relative difference %g", d)
	}
	if d := math.Abs(frob-want.frob) / want.frob; d > tol {
		t.Errorf("||P||_F^2 = %v, want %v (relative difference %g)", frob, want.frob, d)
	}
	if err := e.MulOneHot(ctx, y, want.s, k); err != nil {
		t.Fatal(err)
	}
	if d := maxRelDiff(y, want.ps); d > tol {
		t.Errorf("P·S: max relative difference %g", d)
	}
	frob2, err := e.Stats(ctx, rows)
	if err != nil {
		t.Fatal(err)
	}
	if frob2 != frob || maxRelDiff(rows, want.rows) > tol {
		t.Errorf("Stats: ||P||_F^2 = %v, want %v as from Mul", frob2, frob)
	}
}

func TestPassesMatchDense(t *testing.T) {
	const n, p, k = 157, 3, 5
	x := randomFeatures(n, p, 7)
	src, err := NewGaussian(x, n, p, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	W, s, S := randomW(n, k, 3)
	want := newPassWant(denseP(x, n, p, 0.3), W, s, S)
	for _, tc := range []struct {
		name  string
		block int
	}{
		{name: "block=1", block: 1},
		{name: "block=7/ragged", block: 7},
		{name: "block=16/ragged", block: 16},
		{name: "block=157/one-tile", block: n},
		{name: "block=1000/larger-than-n", block: 1000},
		{name: "block=default", block: 0},
	} {
		for workers := 1; workers <= 4; workers++ {
			t.Run(fmt.Sprintf("%s/workers=%d", tc.name, workers), func(t *testing.T) {
				checkPasses(t, &Engine{Source: src, BlockSize: tc.block, Workers: workers}, want, 1e-13)
			})
		}
	}
}

// TestSameBitsAnyWorkers checks the engine's determinism promise: the
// outputs of a pass do not depend on the number of workers, bit for bit.
func TestSameBitsAnyWorkers(t *testing.T) {
	const n, p, k = 301, 4, 6
	x := randomFeatures(n, p, 11)
	src, _ := NewGaussian(x, n, p, 0.2)
	w := make([]float64, n*k)
	s := make([]int32, n)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range w {
		w[i] = rng.Float64()
	}
	for i := range s {
		s[i] = int32(rng.IntN(k))
	}
	run := func(workers int) (pw, ps, rows []float64, frob float64) {
		e := &Engine{Source: src, BlockSize: 32, Workers: workers}
		pw, ps, rows = make([]float64, n*k), make([]float64, n*k), make([]float64, n)
		var err error
		if frob, err = e.Mul(context.Background(), pw, w, k, rows); err != nil {
			t.Fatal(err)
		}
		if err = e.MulOneHot(context.Background(), ps, s, k); err != nil {
			t.Fatal(err)
		}
		return pw, ps, rows, frob
	}
	pw1, ps1, rows1, frob1 := run(1)
	for _, workers := range []int{2, 3, 4, 7} {
		pw, ps, rows, frob := run(workers)
		for name, pair := range map[string][2][]float64{"P·W": {pw, pw1}, "P·S": {ps, ps1}, "rows": {rows, rows1}} {
			for i := range pair[0] {
				if math.Float64bits(pair[0][i]) != math.Float64bits(pair[1][i]) {
					t.Fatalf("workers=%d: %s[%d] = %v, one worker gave %v", workers, name, i, pair[0][i], pair[1][i])
				}
			}
		}
		if frob != frob1 {
			t.Fatalf("workers=%d: ||P||_F^2 = %v, one worker gave %v", workers, frob, frob1)
		}
	}
}

func TestProgress(t *testing.T) {
	const n, p, k = 50, 2, 3
	g, _ := NewGaussian(randomFeatures(n, p, 1), n, p, 1)
	var calls []string
	e := &Engine{Source: g, BlockSize: 16, Workers: 3, Progress: func(pass string, done, total int) {
		calls = append(calls, fmt.Sprintf("%s %d/%d", pass, done, total))
	}}
	if err := e.MulOneHot(context.Background(), make([]float64, n*k), make([]int32, n), k); err != nil {
		t.Fatal(err)
	}
	// 4 block rows: 4+3+2+1 = 10 tiles, reported in order.
	if len(calls) != 10 || calls[0] != "P·S 1/10" || calls[9] != "P·S 10/10" {
		t.Fatalf("progress calls %v", calls)
	}
}

type failingSource struct {
	Source
	failAt int
}

func (f *failingSource) Tile(dst []float64, r0, r1, c0, c1 int) error {
	if r0 == f.failAt && c0 == f.failAt {
		return errors.New("disk on fire")
	}
	return f.Source.Tile(dst, r0, r1, c0, c1)
}

func TestPassErrors(t *testing.T) {
	const n, p, k = 40, 2, 3
	x := randomFeatures(n, p, 1)
	g, _ := NewGaussian(x, n, p, 1)
	ctx := context.Background()
	e := &Engine{Source: g, BlockSize: 8, Workers: 2}
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{name: "short output", run: func() error { _, err := e.Mul(ctx, make([]float64, 3), make([]float64, n*k), k, nil); return err }, want: "output has 3 values"},
		{name: "short W", run: func() error { _, err := e.Mul(ctx, make([]float64, n*k), make([]float64, 5), k, nil); return err }, want: "W has 5 values"},
		{name: "short row sums", run: func() error { _, err := e.Stats(ctx, make([]float64, 2)); return err }, want: "row sums have 2 values"},
		{name: "short s", run: func() error { return e.MulOneHot(ctx, make([]float64, n*k), make([]int32, 2), k) }, want: "2 column indices"},
		{name: "s out of range", run: func() error {
			s := make([]int32, n)
			s[9] = k
			return e.MulOneHot(ctx, make([]float64, n*k), s, k)
		}, want: "row 9 has column 3"},
		{name: "source error", run: func() error {
			f := &Engine{Source: &failingSource{Source: g, failAt: 16}, BlockSize: 8, Workers: 3}
			_, err := f.Stats(ctx, nil)
			return err
		}, want: "tile rows 16:24 cols 16:24: disk on fire"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

var benchN = flag.Int("bench.n", 4000, "number of points in the pass benchmarks")

// BenchmarkPass measures the P·S and P·W passes of the generated Gaussian
// kernel, and generation alone (stats), in kernel entries per second (all
// n^2 entries counted, though only the upper triangle of tiles is
// generated), for the portable kernel and, where built, the vectorized
// one, in both precisions; also in entries per CPU-second of the process,
// which depends less on the machine's load.
func BenchmarkPass(b *testing.B) {
	n, p := *benchN, 16
	x := randomFeatures(n, p, 1)
	for _, prec := range []Precision{Float32, Float64} {
		src, _ := NewGaussianPrecision(x, n, p, 1.0/(2*float64(p)), prec)
		for _, isa := range SupportedISAs() {
			if isa != ISAGo && !DenseVectorKernel(isa) {
				continue
			}
			for _, bc := range []struct {
				pass string
				k    int
			}{{"PS", 10}, {"PS", 100}, {"PW", 10}, {"PW", 100}, {"stats", 0}} {
				e := &Engine{Source: src, ISA: isa}
				b.Run(fmt.Sprintf("%s/%s/n=%d/p=%d/k=%d", e.Kernel(), bc.pass, n, p, bc.k), func(b *testing.B) {
					y := make([]float64, n*bc.k)
					w := make([]float64, n*bc.k)
					s := make([]int32, n)
					for i := range s {
						s[i] = int32(i % max(bc.k, 1))
						if bc.k > 0 {
							w[i*bc.k+int(s[i])] = 1
						}
					}
					ctx := context.Background()
					cpu0 := processCPU()
					for b.Loop() {
						var err error
						switch bc.pass {
						case "PS":
							err = e.MulOneHot(ctx, y, s, bc.k)
						case "PW":
							_, err = e.Mul(ctx, y, w, bc.k, nil)
						case "stats":
							_, err = e.Stats(ctx, nil)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					entries := float64(n) * float64(n) * float64(b.N)
					b.ReportMetric(entries/b.Elapsed().Seconds(), "entries/s")
					// On a shared machine the wall clock measures the load;
					// entries per CPU-second of the process (all threads) do
					// not depend on it as much.
					if cpu := processCPU() - cpu0; cpu > 0 {
						b.ReportMetric(entries/cpu.Seconds(), "entries/cpu-s")
					}
				})
			}
		}
	}
}
