package fw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/tile"
	"gonum.org/v1/gonum/mat"
)

// kernel returns a Gaussian kernel (gamma = 0.5) of random clustered points
// as a dense n×n matrix, materialized by tile's Gaussian source (which
// package tile tests against the kernel's definition).
func kernel(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 9))
	const p = 3
	x := make([]float64, n*p)
	for i := range n {
		c := float64(rng.IntN(4))
		for q := range p {
			x[i*p+q] = 1.5*c + rng.NormFloat64()
		}
	}
	g, err := tile.NewGaussian(x, n, p, 0.5)
	if err != nil {
		panic(err)
	}
	P := make([]float64, n*n)
	if err := g.Tile(P, 0, n, 0, n); err != nil {
		panic(err)
	}
	return P
}

func randomW(n, k int, seed uint64) []float64 {
	w := make([]float64, n*k)
	if err := Initialize(w, k, StartRandom, seed); err != nil {
		panic(err)
	}
	return w
}

// Dense references, computed from the definitions with gonum.

func denseObjective(P []float64, n int, w []float64, k int) float64 {
	W := mat.NewDense(n, k, w)
	var R mat.Dense
	R.Mul(W, W.T())
	R.Sub(mat.NewDense(n, n, P), &R)
	f := mat.Norm(&R, 2)
	return f * f / 4
}

func denseGradient(P []float64, n int, w []float64, k int) *mat.Dense {
	W := mat.NewDense(n, k, w)
	var R, G mat.Dense
	R.Mul(W, W.T())
	R.Sub(&R, mat.NewDense(n, n, P))
	G.Mul(&R, W)
	return &G
}

// denseGap returns the FW gap <G, W> - sum_i min_j G_ij and the LMO vertex.
func denseGap(P []float64, n int, w []float64, k int) (float64, []int32) {
	G := denseGradient(P, n, w, k)
	var gap float64
	s := make([]int32, n)
	for i := range n {
		best := 0
		for j := range k {
			gap += G.At(i, j) * w[i*k+j]
			if G.At(i, j) < G.At(i, best) {
				best = j
			}
		}
		gap -= G.At(i, best)
		s[i] = int32(best)
	}
	return gap, s
}

func relErr(got, want float64) float64 {
	return math.Abs(got-want) / math.Max(math.Abs(want), 1e-300)
}

func newTestSolver(t *testing.T, P []float64, n int, w []float64, k, workers int) *FrankWolfe {
	t.Helper()
	d, err := NewDense(n, P)
	if err != nil {
		t.Fatal(err)
	}
	r := &Run{Problem: Problem{P: d, K: k}, N: n, W: w, PW: make([]float64, n*k), Workers: workers}
	s := &FrankWolfe{}
	if err := s.setup(r); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if r.FrobSq, err = d.Mul(ctx, r.PW, w, k, make([]float64, n)); err != nil {
		t.Fatal(err)
	}
	if s.a, err = gram(ctx, workers, w, n, k); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestObjectiveAndGapIdentities checks f via ||P||_F^2, <W, PW> and WᵀW, and
// the row-wise gap and LMO, against dense computations.
func TestObjectiveAndGapIdentities(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n, k    int
		workers int
	}{
		{name: "n=50/k=1", n: 50, k: 1, workers: 1},
		{name: "n=120/k=4", n: 120, k: 4, workers: 2},
		{name: "n=300/k=9", n: 300, k: 9, workers: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			P := kernel(tc.n, 1)
			w := randomW(tc.n, tc.k, 2)
			s := newTestSolver(t, P, tc.n, w, tc.k, tc.workers)
			acc, err := s.lmo(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := s.objective(acc), denseObjective(P, tc.n, w, tc.k); relErr(got, want) > 1e-12 {
				t.Errorf("objective %v, dense %v", got, want)
			}
			wantGap, wantS := denseGap(P, tc.n, w, tc.k)
			if got := acc.gw - acc.gmin; relErr(got, wantGap) > 1e-10 {
				t.Errorf("gap %v, dense %v", got, wantGap)
			}
			if wantGap < 0 {
				t.Errorf("gap %v < 0", wantGap)
			}
			for i := range wantS {
				if s.sel[i] != wantS[i] {
					t.Fatalf("LMO row %d picks %d, dense picks %d", i, s.sel[i], wantS[i])
				}
			}
			var A mat.Dense
			W := mat.NewDense(tc.n, tc.k, w)
			A.Mul(W.T(), W)
			for r := range tc.k {
				for c := range tc.k {
					if relErr(s.a[r*tc.k+c], A.At(r, c)) > 1e-13 {
						t.Fatalf("WᵀW[%d][%d] = %v, dense %v", r, c, s.a[r*tc.k+c], A.At(r, c))
					}
				}
			}
		})
	}
}

// TestGapZeroAtKKTPoint builds P = W* W*ᵀ for a one-hot W*, where f = 0 and
// the gradient vanishes, so the gap must be 0 and the solver stops at once.
func TestGapZeroAtKKTPoint(t *testing.T) {
	const n, k = 40, 3
	w := make([]float64, n*k)
	for i := range n {
		w[i*k+i%k] = 1
	}
	P := make([]float64, n*n)
	for i := range n {
		for j := range n {
			if i%k == j%k {
				P[i*n+j] = 1
			}
		}
	}
	d, _ := NewDense(n, P)
	set := Settings{GapTol: math.SmallestNonzeroFloat64} // stop at gap <= 0
	res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, &FrankWolfe{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Gap != 0 || res.Objective != 0 || res.Status != GapTolerance || res.Iterations != 0 {
		t.Fatalf("at a KKT point: gap %v, objective %v, status %v, %d iterations; want 0, 0, gap, 0",
			res.Gap, res.Objective, res.Status, res.Iterations)
	}
	if g, _ := denseGap(P, n, w, k); g != 0 {
		t.Fatalf("dense gap %v at a KKT point", g)
	}
}

// TestQuarticMatchesDirectEvaluation checks the line-search coefficients
// against f(W + λ(S - W)) evaluated densely.
func TestQuarticMatchesDirectEvaluation(t *testing.T) {
	for _, tc := range []struct {
		name string
		n, k int
		init Start
	}{
		{name: "random/k=3", n: 90, k: 3, init: StartRandom},
		{name: "random/k=7", n: 200, k: 7, init: StartRandom},
		{name: "corners/k=5", n: 150, k: 5, init: StartCorners},
		{name: "k=1", n: 30, k: 1, init: StartRandom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			P := kernel(tc.n, 3)
			w := make([]float64, tc.n*tc.k)
			if err := Initialize(w, tc.k, tc.init, 4); err != nil {
				t.Fatal(err)
			}
			s := newTestSolver(t, P, tc.n, w, tc.k, 2)
			acc, _ := s.lmo(context.Background())
			if err := s.run.P.MulOneHot(context.Background(), s.ps, s.sel, tc.k); err != nil {
				t.Fatal(err)
			}
			gap := acc.gw - acc.gmin
			q, err := s.quartic(context.Background(), acc, gap)
			if err != nil {
				t.Fatal(err)
			}
			f0 := denseObjective(P, tc.n, w, tc.k)
			scale := math.Max(f0, 1)
			for _, lam := range []float64{1e-3, 0.1, 0.37, 0.5, 0.9, 1} {
				wl := make([]float64, len(w))
				for i := range tc.n {
					for j := range tc.k {
						wl[i*tc.k+j] = (1 - lam) * w[i*tc.k+j]
					}
					wl[i*tc.k+int(s.sel[i])] += lam
				}
				direct := denseObjective(P, tc.n, wl, tc.k) - f0
				if d := math.Abs(q.at(lam) - direct); d > 1e-11*scale {
					t.Errorf("λ=%v: quartic gives %v, direct evaluation %v (diff %g)", lam, q.at(lam), direct, d)
				}
			}
		})
	}
}

// TestQuarticArgmin compares the exact line search with a fine grid.
func TestQuarticArgmin(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	cases := []quartic{
		{a1: -1, a2: 1, a3: 0, a4: 0},      // quadratic, minimum at 0.5
		{a1: -1, a2: 0, a3: 0, a4: 0},      // linear, minimum at 1
		{a1: 0, a2: 0, a3: 0, a4: 0},       // flat: smallest λ, 0
		{a1: 0, a2: 1, a3: 0, a4: 1},       // convex, minimum at 0
		{a1: -2, a2: 9, a3: -14, a4: 6.25}, // two local minima in (0, 1)
	}
	for range 2000 {
		cases = append(cases, quartic{a1: -rng.Float64() * 3, a2: rng.NormFloat64() * 5, a3: rng.NormFloat64() * 5, a4: rng.Float64() * 5})
	}
	for _, q := range cases {
		x := q.argmin()
		if x < 0 || x > 1 {
			t.Fatalf("%+v: argmin %v outside [0, 1]", q, x)
		}
		fx := q.at(x)
		for i := 0; i <= 100000; i++ {
			g := float64(i) / 100000
			if q.at(g) < fx-1e-12*(1+math.Abs(fx)) {
				t.Fatalf("%+v: argmin %v gives %v, but q(%v) = %v", q, x, fx, g, q.at(g))
			}
		}
	}
	if x := (quartic{a1: -1, a2: 1}).argmin(); math.Abs(x-0.5) > 1e-15 {
		t.Errorf("quadratic argmin %v, want 0.5", x)
	}
	if x := (quartic{}).argmin(); x != 0 {
		t.Errorf("flat argmin %v, want 0 (smallest on ties)", x)
	}
}

// TestQuarticRoot checks the root finder of argmin on quartics whose
// derivative 4(x-r1)(x-r2)(x-r3) has known roots, each bracketed by the
// midpoints between them, and deriv2 against a difference quotient.
func TestQuarticRoot(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for range 2000 {
		r := []float64{rng.Float64(), rng.Float64(), rng.Float64()}
		slices.Sort(r)
		if r[1]-r[0] < 0.05 || r[2]-r[1] < 0.05 { // closer roots are ill-conditioned
			continue
		}
		q := quartic{
			a1: -4 * r[0] * r[1] * r[2],
			a2: 2 * (r[0]*r[1] + r[0]*r[2] + r[1]*r[2]),
			a3: -4 * (r[0] + r[1] + r[2]) / 3,
			a4: 1,
		}
		bounds := []float64{r[0] - 0.5, (r[0] + r[1]) / 2, (r[1] + r[2]) / 2, r[2] + 0.5}
		for i, want := range r {
			lo, hi := bounds[i], bounds[i+1]
			if got := q.root(lo, hi, q.deriv(lo)); math.Abs(got-want) > 1e-12 {
				t.Fatalf("%+v on [%v, %v]: root %v, want %v", q, lo, hi, got, want)
			}
		}
		x, h := rng.Float64(), 1e-6
		if fd := (q.deriv(x+h) - q.deriv(x-h)) / (2 * h); math.Abs(fd-q.deriv2(x)) > 1e-6*(1+math.Abs(fd)) {
			t.Fatalf("%+v: deriv2(%v) = %v, difference quotient %v", q, x, q.deriv2(x), fd)
		}
	}
}

// denseFW is a reference implementation of Frank-Wolfe with exact line
// search that shares nothing with the solver but quartic.argmin: gradient
// and objective are dense, and the quartic's coefficients are interpolated
// from five direct evaluations of f along the step.
func denseFW(P []float64, n int, w []float64, k, iters int) {
	for range iters {
		_, s := denseGap(P, n, w, k)
		at := func(lam float64) float64 {
			wl := make([]float64, len(w))
			for i := range n {
				for j := range k {
					wl[i*k+j] = (1 - lam) * w[i*k+j]
				}
				wl[i*k+int(s[i])] += lam
			}
			return denseObjective(P, n, wl, k)
		}
		// Solve the Vandermonde system for q(λ) = f(λ) - f(0) at λ = 1/4..1.
		f0 := at(0)
		V := mat.NewDense(4, 4, nil)
		b := mat.NewVecDense(4, nil)
		for r := range 4 {
			x := float64(r+1) / 4
			for c := range 4 {
				V.Set(r, c, math.Pow(x, float64(c+1)))
			}
			b.SetVec(r, at(x)-f0)
		}
		var a mat.VecDense
		if err := a.SolveVec(V, b); err != nil {
			panic(err)
		}
		lam := quartic{a.AtVec(0), a.AtVec(1), a.AtVec(2), a.AtVec(3)}.argmin()
		for i := range n {
			for j := range k {
				w[i*k+j] *= 1 - lam
			}
			w[i*k+int(s[i])] += lam
		}
	}
}

func TestMinimizeMatchesDenseReference(t *testing.T) {
	const n, k, iters = 120, 4, 12
	P := kernel(n, 5)
	d, _ := NewDense(n, P)
	w := randomW(n, k, 6)
	ref := append([]float64(nil), w...)
	set := Settings{MaxIter: iters, GapTol: -1, Refresh: 5}
	res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, &FrankWolfe{})
	if err != nil {
		t.Fatal(err)
	}
	denseFW(P, n, ref, k, iters)
	var diff float64
	for i := range w {
		diff = math.Max(diff, math.Abs(w[i]-ref[i]))
	}
	if diff > 1e-6 {
		t.Errorf("after %d iterations W differs from the dense reference by %g", iters, diff)
	}
	if got, want := res.Objective, denseObjective(P, n, w, k); relErr(got, want) > 1e-12 {
		t.Errorf("reported objective %v, dense %v", got, want)
	}
	if got, _ := denseGap(P, n, w, k); relErr(res.Gap, got) > 1e-9 {
		t.Errorf("reported gap %v, dense %v", res.Gap, got)
	}
	if res.Iterations != iters || res.Status != IterationLimit {
		t.Errorf("%d iterations, status %v; want %d, max-iter", res.Iterations, res.Status, iters)
	}
	// Passes: the first P·W, one P·S per iteration, refreshes after
	// iterations 5 and 10, and the final one.
	if want := 1 + iters + 2 + 1; res.Passes != want {
		t.Errorf("%d passes, want %d", res.Passes, want)
	}
}

// TestCarriedPWMatchesFreshPass runs without refresh and compares the
// carried P·W with a dense product at the end, before the final refresh.
func TestCarriedPWMatchesFreshPass(t *testing.T) {
	const n, k = 150, 5
	P := kernel(n, 7)
	d, _ := NewDense(n, P)
	w := randomW(n, k, 8)
	set := Settings{MaxIter: 40, GapTol: -1, Refresh: -1}
	set.PW = make([]float64, n*k)
	var carried []float64
	set.Recorder = func(it Iteration) error {
		// The record of an iteration follows its step: after the last
		// step's, P·W is the carried one at the final W; the final record
		// follows the final refresh.
		if !it.Final {
			carried = append(carried[:0], set.PW...)
		}
		return nil
	}
	// The recorder sees set.PW through the copy Minimize keeps: same slice.
	if _, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, &FrankWolfe{}); err != nil {
		t.Fatal(err)
	}
	fresh := make([]float64, n*k)
	d.Mul(context.Background(), fresh, w, k, nil)
	var num, den float64
	for i := range fresh {
		num = math.Max(num, math.Abs(carried[i]-fresh[i]))
		den = math.Max(den, math.Abs(fresh[i]))
	}
	if num/den > 1e-12 {
		t.Errorf("carried P·W drifted by %g relative after 40 steps", num/den)
	}
}

// TestRunInvariants checks, on every iteration of several runs, that W stays
// on the product of simplices, the gap is nonnegative, and the objective
// never increases under the exact step.
func TestRunInvariants(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n, k  int
		step  StepRule
		start Start
		iters int
	}{
		{name: "exact/long", n: 40, k: 3, step: StepExact, start: StartRandom, iters: 5000},
		{name: "exact/random", n: 200, k: 6, step: StepExact, start: StartRandom},
		{name: "exact/corners", n: 200, k: 6, step: StepExact, start: StartCorners},
		{name: "exact/k=1", n: 50, k: 1, step: StepExact, start: StartRandom},
		{name: "open-loop", n: 120, k: 4, step: StepOpenLoop, start: StartRandom},
		{name: "curvature", n: 120, k: 4, step: StepCurvature, start: StartRandom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			P := kernel(tc.n, 11)
			d, _ := NewDense(tc.n, P)
			w := make([]float64, tc.n*tc.k)
			Initialize(w, tc.k, tc.start, 12)
			set := Settings{MaxIter: max(tc.iters, 60), GapTol: -1, Refresh: 7, Workers: 2}
			prev := math.Inf(1)
			set.Recorder = func(it Iteration) error {
				if it.Gap < -1e-9*math.Abs(it.Objective) {
					t.Errorf("iteration %d: gap %v < 0", it.Iter, it.Gap)
				}
				if tc.step == StepExact && it.Objective > prev*(1+1e-12) {
					t.Errorf("iteration %d: objective rose from %v to %v", it.Iter, prev, it.Objective)
				}
				if it.Step < 0 || it.Step > 1 {
					t.Errorf("iteration %d: step %v outside [0, 1]", it.Iter, it.Step)
				}
				if err := checkSimplex(w, tc.k, 1e-12); err != nil {
					t.Errorf("iteration %d: %v", it.Iter, err)
				}
				prev = it.Objective
				return nil
			}
			res, err := Minimize(context.Background(), Problem{P: d, K: tc.k}, w, &set, &FrankWolfe{Step: tc.step})
			if err != nil {
				t.Fatal(err)
			}
			if err := checkSimplex(w, tc.k, 1e-12); err != nil {
				t.Error(err)
			}
			if tc.step == StepExact && res.Objective > prev*(1+1e-12) {
				t.Errorf("final objective %v above the last iterate's %v", res.Objective, prev)
			}
		})
	}
}

func TestStepRules(t *testing.T) {
	const n, k = 80, 3
	P := kernel(n, 13)
	d, _ := NewDense(n, P)
	var maxRow float64
	for i := range n {
		var s float64
		for j := range n {
			s += P[i*n+j]
		}
		maxRow = math.Max(maxRow, s)
	}
	for _, tc := range []struct {
		step StepRule
		want func(it Iteration) float64
	}{
		{step: StepOpenLoop, want: func(it Iteration) float64 { return 2 / float64(it.Iter+2) }},
		{step: StepCurvature, want: func(it Iteration) float64 {
			return math.Min(it.Gap/(2*n*(3*n+maxRow)), 1)
		}},
	} {
		t.Run(tc.step.String(), func(t *testing.T) {
			w := randomW(n, k, 14)
			set := Settings{MaxIter: 10, GapTol: -1}
			set.Recorder = func(it Iteration) error {
				if it.Iter < set.MaxIter && relErr(it.Step, tc.want(it)) > 1e-12 {
					t.Errorf("iteration %d: step %v, want %v", it.Iter, it.Step, tc.want(it))
				}
				return nil
			}
			res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, &FrankWolfe{Step: tc.step})
			if err != nil {
				t.Fatal(err)
			}
			if relErr(res.MaxRowSum, maxRow) > 1e-13 {
				t.Errorf("max row sum %v, want %v", res.MaxRowSum, maxRow)
			}
		})
	}
}

func TestStopRules(t *testing.T) {
	const n, k = 100, 4
	P := kernel(n, 15)
	d, _ := NewDense(n, P)
	for _, tc := range []struct {
		name   string
		set    func(*Settings)
		status Status
	}{
		{name: "max-iter", set: func(s *Settings) { s.MaxIter, s.GapTol = 7, -1 }, status: IterationLimit},
		{name: "ftol", set: func(s *Settings) { s.MaxIter, s.GapTol, s.FuncTol = 10000, -1, 1e-3 }, status: FunctionConvergence},
		{name: "gap", set: func(s *Settings) { s.MaxIter, s.GapTol = 10000, 1 }, status: GapTolerance},
		{name: "rel-ftol", set: func(s *Settings) { s.MaxIter, s.GapTol, s.RelFuncTol = 10000, -1, 1e-5 }, status: RelativeFunctionConvergence},
		{name: "rel-gap", set: func(s *Settings) { s.MaxIter, s.GapTol, s.RelGapTol = 10000, -1, 1e-3 }, status: RelativeGapTolerance},
		{name: "model-gap", set: func(s *Settings) { s.MaxIter, s.GapTol, s.ModelGapTol = 10000, -1, 1e-3 }, status: ModelGapTolerance},
		{name: "max-time", set: func(s *Settings) { s.MaxIter, s.GapTol, s.MaxTime = 10000, -1, time.Nanosecond }, status: TimeLimit},
		{name: "zero iterations", set: func(s *Settings) { s.MaxIter, s.GapTol = -1, -1 }, status: IterationLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := randomW(n, k, 16)
			set := Settings{}
			tc.set(&set)
			var last []Iteration
			// The recorder also checks Moved against the clusters of w,
			// which Minimize updates in place.
			labels := argmaxRows(w, k)
			set.Recorder = func(it Iteration) error {
				now := argmaxRows(w, k)
				changed := 0
				for i := range now {
					if now[i] != labels[i] {
						changed++
					}
				}
				if !it.Final && it.Moved != changed {
					t.Errorf("iteration %d: moved %d, want %d", it.Iter, it.Moved, changed)
				}
				labels = now
				last = append(last, it)
				return nil
			}
			saved := 0
			set.Checkpoint = func(*State) error { saved++; return nil }
			res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, &FrankWolfe{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Fatalf("status %v, want %v", res.Status, tc.status)
			}
			end := last[len(last)-1]
			switch tc.status {
			case IterationLimit:
				if want := max(set.MaxIter, 0); res.Iterations != want { // MaxIter -1: none
					t.Errorf("%d iterations, want %d", res.Iterations, want)
				}
			case FunctionConvergence:
				if prev := last[len(last)-2]; math.Abs(end.Objective-prev.Objective) >= set.FuncTol {
					t.Errorf("stopped on ftol with |Δf| = %v", math.Abs(end.Objective-prev.Objective))
				}
			case GapTolerance:
				if end.Gap > set.GapTol || !res.Status.Converged() {
					t.Errorf("stopped on gap %v > tol %v", end.Gap, set.GapTol)
				}
			case RelativeFunctionConvergence:
				change := func(i int) float64 { return math.Abs(last[i].Objective - last[i-1].Objective) }
				if e := len(last) - 1; change(e) > set.RelFuncTol*end.Objective || change(e-1) <= set.RelFuncTol*last[e-1].Objective {
					t.Errorf("stopped on rel-ftol with |Δf| = %v, before it %v, f = %v", change(e), change(e-1), end.Objective)
				}
			case RelativeGapTolerance:
				if end.Gap > set.RelGapTol*end.Objective || !res.Status.Converged() {
					t.Errorf("stopped on rel-gap %v > %v·f = %v", end.Gap, set.RelGapTol, set.RelGapTol*end.Objective)
				}
			case ModelGapTolerance:
				g := gramOf(w, n, k)
				if model := dot(g, g) / 4; math.Abs(res.Model-model) > 1e-12*model {
					t.Errorf("Result.Model %v, ¼||WᵀW||² %v", res.Model, model)
				}
				if end.Gap > set.ModelGapTol*res.Model || !res.Status.Converged() || res.Iterations == 0 {
					t.Errorf("stopped on model-gap %v > %v·¼||WᵀW||² = %v after %d iterations", end.Gap, set.ModelGapTol, set.ModelGapTol*res.Model, res.Iterations)
				}
			case TimeLimit:
				if saved != 1 || res.Iterations != 0 {
					t.Errorf("max-time: %d checkpoints and %d iterations, want 1 and 0", saved, res.Iterations)
				}
			}
			if tc.status != TimeLimit && saved != 0 {
				t.Errorf("%d checkpoints, want none", saved)
			}
			if len(last) != res.Iterations+1 || end.Step != 0 {
				t.Errorf("%d records for %d iterations, last step %v", len(last), res.Iterations, end.Step)
			}
		})
	}
}

// TestSameBitsAnyWorkers checks that the row passes' reductions do not
// depend on the number of workers (n spans several row chunks).
func TestSameBitsAnyWorkers(t *testing.T) {
	const n, k = 2*chunkRows + 77, 3
	P := kernel(n, 17)
	d, _ := NewDense(n, P)
	run := func(workers int) ([]float64, *Result) {
		w := randomW(n, k, 18)
		set := Settings{MaxIter: 6, GapTol: -1, Workers: workers, Refresh: 4}
		res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, &FrankWolfe{})
		if err != nil {
			t.Fatal(err)
		}
		return w, res
	}
	w1, r1 := run(1)
	for _, workers := range []int{2, 3, 5} {
		w, r := run(workers)
		if r.Objective != r1.Objective || r.Gap != r1.Gap {
			t.Fatalf("workers=%d: objective %v gap %v, one worker gave %v %v", workers, r.Objective, r.Gap, r1.Objective, r1.Gap)
		}
		for i := range w {
			if math.Float64bits(w[i]) != math.Float64bits(w1[i]) {
				t.Fatalf("workers=%d: W[%d] = %v, one worker gave %v", workers, i, w[i], w1[i])
			}
		}
	}
}

func TestMinimizeErrors(t *testing.T) {
	P := kernel(10, 1)
	d, _ := NewDense(10, P)
	good := randomW(10, 2, 1)
	neg := append([]float64(nil), good...)
	neg[3] = -0.1
	off := append([]float64(nil), good...)
	off[4] += 0.5
	for _, tc := range []struct {
		name string
		p    Problem
		w    []float64
		set  *Settings
	}{
		{name: "no affinity", p: Problem{K: 2}, w: good},
		{name: "k=0", p: Problem{P: d, K: 0}, w: good},
		{name: "short W", p: Problem{P: d, K: 2}, w: good[:5]},
		{name: "negative entry", p: Problem{P: d, K: 2}, w: neg},
		{name: "row sum", p: Problem{P: d, K: 2}, w: off},
		{name: "negative ftol", p: Problem{P: d, K: 2}, w: good, set: &Settings{FuncTol: -1}},
		{name: "negative workers", p: Problem{P: d, K: 2}, w: good, set: &Settings{Workers: -1}},
		{name: "short PW", p: Problem{P: d, K: 2}, w: good, set: &Settings{MaxIter: 1, PW: make([]float64, 3)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Minimize(context.Background(), tc.p, tc.w, tc.set, &FrankWolfe{}); err == nil {
				t.Fatal("no error")
			}
		})
	}
	if _, err := NewDense(2, []float64{1, 2, 3, 1}); err == nil {
		t.Error("NewDense accepted a non-symmetric matrix")
	}
	if _, err := NewDense(2, []float64{1, -2, -2, 1}); err == nil {
		t.Error("NewDense accepted a negative entry")
	}
}

func TestInitialize(t *testing.T) {
	for _, start := range []Start{StartRandom, StartCorners} {
		a, b := make([]float64, 60), make([]float64, 60)
		Initialize(a, 6, start, 3)
		Initialize(b, 6, start, 3)
		if err := checkSimplex(a, 6, 1e-15); err != nil {
			t.Errorf("%v: %v", start, err)
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%v: same seed gave different points", start)
			}
		}
		if s, err := ParseStart(start.String()); err != nil || s != start {
			t.Errorf("ParseStart(%q) = %v, %v", start.String(), s, err)
		}
	}
	if _, err := ParseStart("kmeans"); err == nil {
		t.Error("ParseStart accepted an unknown name")
	}
	for _, r := range []StepRule{StepExact, StepCurvature, StepOpenLoop} {
		if got, err := ParseStepRule(r.String()); err != nil || got != r {
			t.Errorf("ParseStepRule(%q) = %v, %v", r.String(), got, err)
		}
	}
	for _, tc := range []struct{ got, want string }{
		{Status(99).String(), "Status(99)"},
		{StepRule(99).String(), "StepRule(99)"},
		{Start(99).String(), "Start(99)"},
		{IterationLimit.String(), "max-iter"},
		{GapTolerance.String(), "gap"},
		{FunctionConvergence.String(), "ftol"},
	} {
		if tc.got != tc.want {
			t.Errorf("String() = %q, want %q", tc.got, tc.want)
		}
	}
}

// BenchmarkLMO measures the row pass that forms the gradient rows, picks
// the LMO vertex and sums the gap, in rows per second.
func BenchmarkLMO(b *testing.B) {
	for _, k := range []int{10, 100} {
		b.Run(fmt.Sprintf("n=100000/k=%d", k), func(b *testing.B) {
			const n = 100000
			ctx := context.Background()
			r := &Run{Problem: Problem{K: k}, N: n, W: randomW(n, k, 1), PW: randomW(n, k, 2), Workers: 2}
			s := &FrankWolfe{run: r, sel: make([]int32, n)}
			var err error
			if s.a, err = gram(ctx, 2, r.W, n, k); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := s.lmo(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// flakyAffinity fails its calls from the given one on, or cancels a context.
type flakyAffinity struct {
	*Dense
	calls, failAt int
	cancel        context.CancelFunc
}

func (f *flakyAffinity) hit() error {
	f.calls++
	if f.calls < f.failAt {
		return nil
	}
	if f.cancel != nil {
		f.cancel()
		return context.Canceled
	}
	return errors.New("tile file truncated")
}

func (f *flakyAffinity) Mul(ctx context.Context, dst, w []float64, k int, rows []float64) (float64, error) {
	if err := f.hit(); err != nil {
		return 0, err
	}
	return f.Dense.Mul(ctx, dst, w, k, rows)
}

func (f *flakyAffinity) MulOneHot(ctx context.Context, dst []float64, s []int32, k int) error {
	if err := f.hit(); err != nil {
		return err
	}
	return f.Dense.MulOneHot(ctx, dst, s, k)
}

// TestPassFailures checks that a failing or canceled pass stops the run with
// its error and a Result that counts what was completed.
func TestPassFailures(t *testing.T) {
	testPassFailures(t, 19, []passFailure{
		{name: "first pass", failAt: 1, wantIterations: 0},
		{name: "third P·S pass", failAt: 4, wantIterations: 2},
		{name: "refresh pass", failAt: 7, wantIterations: 5}, // call 7 is the refresh after iteration 5, which is counted and recorded
		{name: "canceled", failAt: 4, cancel: true, wantIterations: 2},
	}, true, func(ctx context.Context, p Problem, w []float64) (*Result, error) {
		set := Settings{MaxIter: 20, GapTol: -1, Refresh: 5}
		return Minimize(ctx, p, w, &set, &FrankWolfe{})
	})
}

// passFailure is a run whose failAt-th pass (1-based) fails, or cancels
// the context if cancel is set.
type passFailure struct {
	name           string
	failAt         int
	cancel         bool
	wantIterations int
}

// testPassFailures runs solve on a 30×3 problem (P from seed, W from
// seed+1) through a flakyAffinity for each case, and checks that it ends
// with the pass's error (context.Canceled exactly when canceled) and a
// Result that counts the passes completed and, if iterations is set, the
// iterations.
func testPassFailures(t *testing.T, seed uint64, cases []passFailure, iterations bool,
	solve func(ctx context.Context, p Problem, w []float64) (*Result, error)) {
	t.Helper()
	const n, k = 30, 3
	d, _ := NewDense(n, kernel(n, seed))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := &flakyAffinity{Dense: d, failAt: tc.failAt}
			if tc.cancel {
				f.cancel = cancel
			}
			res, err := solve(ctx, Problem{P: f, K: k}, randomW(n, k, seed+1))
			if err == nil {
				t.Fatal("no error")
			}
			if tc.cancel != errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
			switch {
			case iterations && (res == nil || res.Iterations != tc.wantIterations || res.Passes != tc.failAt-1):
				t.Fatalf("result %+v, want %d iterations and %d passes", res, tc.wantIterations, tc.failAt-1)
			case res == nil || res.Passes != tc.failAt-1:
				t.Fatalf("result %+v, want %d passes", res, tc.failAt-1)
			}
		})
	}
}

// TestGramUpdate checks W'ᵀW' = (1-λ)^2 WᵀW + λ(1-λ)(WᵀS + SᵀW) + λ^2 SᵀS,
// formed from the LMO pass's sums, against WᵀW recomputed after the step.
func TestGramUpdate(t *testing.T) {
	const n, k = 2*chunkRows + 5, 7
	P := kernel(n, 21)
	for _, lam := range []float64{0, 0.3, 1} {
		w := randomW(n, k, 22)
		s := newTestSolver(t, P, n, w, k, 3)
		acc, err := s.lmo(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := s.run.P.MulOneHot(ctx, s.ps, s.sel, k); err != nil {
			t.Fatal(err)
		}
		s.updateGram(acc, lam)
		if _, err := s.step(ctx, lam, true, false); err != nil {
			t.Fatal(err)
		}
		want, _ := gram(ctx, 1, w, n, k)
		for i := range want {
			if math.Abs(s.a[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("λ=%v: updated WᵀW[%d] = %v, recomputed %v", lam, i, s.a[i], want[i])
			}
		}
		// The carried P·W must equal a fresh product too.
		fresh := make([]float64, n*k)
		s.run.P.Mul(ctx, fresh, w, k, nil)
		for i := range fresh {
			if math.Abs(s.run.PW[i]-fresh[i]) > 1e-12*math.Max(1, math.Abs(fresh[i])) {
				t.Fatalf("λ=%v: carried P·W[%d] = %v, fresh %v", lam, i, s.run.PW[i], fresh[i])
			}
		}
	}
}
