package fw

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// densePenalized returns F(W) = f(W) + μ/2 (||W1 - 1||^2 + ||min(W,0)||^2)
// and its gradient from the definitions.
func densePenalized(P []float64, n int, w []float64, k int, mu float64) (float64, []float64) {
	F := denseObjective(P, n, w, k)
	G := denseGradient(P, n, w, k)
	grad := make([]float64, n*k)
	for i := range n {
		var sum float64
		for j := range k {
			sum += w[i*k+j]
		}
		F += mu / 2 * (sum - 1) * (sum - 1)
		for j := range k {
			v := w[i*k+j]
			grad[i*k+j] = G.At(i, j) + mu*(sum-1)
			if v < 0 {
				F += mu / 2 * v * v
				grad[i*k+j] += mu * v
			}
		}
	}
	return F, grad
}

// TestPenalizedObjectiveAndGradient checks F and its gradient at infeasible
// points against the dense definitions, and the gradient against central
// differences of F.
func TestPenalizedObjectiveAndGradient(t *testing.T) {
	const n, k = 40, 3
	P := kernel(n, 51)
	d, _ := NewDense(n, P)
	rng := rand.New(rand.NewPCG(52, 0))
	w := make([]float64, n*k)
	for i := range w {
		w[i] = rng.NormFloat64() * 0.5
	}
	ctx := context.Background()
	for _, mu := range []float64{0, 1, 1e3} {
		run := &Run{Problem: Problem{P: d, K: k}, N: n, W: make([]float64, n*k), PW: make([]float64, n*k), Workers: 2}
		r := &Penalty{run: run, mu: mu}
		var err error
		if run.FrobSq, err = d.Mul(ctx, run.PW, run.W, k, make([]float64, n)); err != nil {
			t.Fatal(err)
		}
		if err := r.at(ctx, w); err != nil {
			t.Fatal(err)
		}
		F, grad := densePenalized(P, n, w, k, mu)
		if e := relErr(r.penalized(ctx), F); e > 1e-12 {
			t.Errorf("μ = %v: F = %v, dense %v", mu, r.penalized(ctx), F)
		}
		got := make([]float64, n*k)
		r.gradient(ctx, got)
		for i := range got {
			if math.Abs(got[i]-grad[i]) > 1e-10*(1+math.Abs(grad[i])) {
				t.Fatalf("μ = %v: gradient[%d] = %v, dense %v", mu, i, got[i], grad[i])
			}
		}
		for _, i := range []int{0, 17, n*k - 1} {
			const h = 1e-6
			x := slices.Clone(w)
			x[i] += h
			fp, _ := densePenalized(P, n, x, k, mu)
			x[i] -= 2 * h
			fm, _ := densePenalized(P, n, x, k, mu)
			if fd := (fp - fm) / (2 * h); math.Abs(fd-got[i]) > 1e-5*(1+math.Abs(fd)) {
				t.Errorf("μ = %v: gradient[%d] = %v, central difference %v", mu, i, got[i], fd)
			}
		}
	}
}

// countingAffinity counts its passes.
type countingAffinity struct {
	*Dense
	mul, oneHot int
}

func (c *countingAffinity) Mul(ctx context.Context, dst, w []float64, k int, rows []float64) (float64, error) {
	c.mul++
	return c.Dense.Mul(ctx, dst, w, k, rows)
}

func (c *countingAffinity) MulOneHot(ctx context.Context, dst []float64, s []int32, k int) error {
	c.oneHot++
	return c.Dense.MulOneHot(ctx, dst, s, k)
}

// TestPenaltyReport runs the penalty method and checks what it reports
// against direct computations on the point it returns: f and the formal gap
// there, the feasibility violation, and f and the gap at the projection.
func TestPenaltyReport(t *testing.T) {
	for _, tc := range []struct {
		name            string
		n, k            int
		rounds          int
		wantMaxRowError float64 // the violation must have shrunk below this
	}{
		{name: "two rounds", n: 50, k: 3, rounds: 2, wantMaxRowError: 1},
		{name: "fifteen rounds", n: 80, k: 4, rounds: 15, wantMaxRowError: 1e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, k := tc.n, tc.k
			P := kernel(n, 53)
			d, _ := NewDense(n, P)
			c := &countingAffinity{Dense: d}
			w := randomW(n, k, 54)
			set := Settings{MaxIter: tc.rounds, GapTol: -1, Workers: 2}
			var its []Iteration
			set.Recorder = func(it Iteration) error { its = append(its, it); return nil }
			pen := &Penalty{InnerIter: 50}
			res, err := Minimize(context.Background(), Problem{P: c, K: k}, w, &set, pen)
			if err != nil {
				t.Fatal(err)
			}
			rep := pen.Report()
			if res.Status != IterationLimit || res.Iterations != tc.rounds || len(its) != tc.rounds+1 {
				t.Fatalf("status %v after %d rounds, %d records", res.Status, res.Iterations, len(its))
			}
			if res.Passes != c.mul || c.oneHot != 0 {
				t.Errorf("%d passes reported, %d P·W and %d P·S made", res.Passes, c.mul, c.oneHot)
			}
			if rep.InnerIterations < tc.rounds || rep.InnerIterations > tc.rounds*pen.InnerIter {
				t.Errorf("%d inner iterations in %d rounds", rep.InnerIterations, tc.rounds)
			}
			if want := math.Pow(2, float64(tc.rounds-1)); rep.Coef != want {
				t.Errorf("last μ = %v, want %v", rep.Coef, want)
			}
			for i, it := range its[:tc.rounds] {
				if it.Step != math.Pow(2, float64(i)) {
					t.Errorf("record %d: μ = %v", i, it.Step)
				}
			}

			if e := relErr(res.Objective, denseObjective(P, n, w, k)); e > 1e-11 {
				t.Errorf("f = %v, dense %v", res.Objective, denseObjective(P, n, w, k))
			}
			if gap, _ := denseGap(P, n, w, k); relErr(res.Gap, gap) > 1e-8 {
				t.Errorf("gap = %v, dense %v", res.Gap, gap)
			}
			var rowErr, minEntry float64
			for i := range n {
				var sum float64
				for _, v := range w[i*k : (i+1)*k] {
					sum += v
					minEntry = math.Min(minEntry, v)
				}
				rowErr = math.Max(rowErr, math.Abs(sum-1))
			}
			if rep.MaxRowSumError != rowErr || rep.MinEntry != minEntry {
				t.Errorf("violation %v, min entry %v; direct %v, %v", rep.MaxRowSumError, rep.MinEntry, rowErr, minEntry)
			}
			if rowErr == 0 && minEntry == 0 {
				t.Error("the penalty iterate is exactly feasible: the test shows nothing")
			}
			if !(rowErr < tc.wantMaxRowError) || rep.Feasible(rowErr/2) || !rep.Feasible(rowErr) {
				t.Errorf("max row error %v, want < %v; Feasible wrong", rowErr, tc.wantMaxRowError)
			}
			proj := slices.Clone(w)
			for i := range n {
				copy(proj[i*k:], bisectProjection(w[i*k:(i+1)*k]))
			}
			if e := relErr(rep.ProjectedObjective, denseObjective(P, n, proj, k)); e > 1e-10 {
				t.Errorf("projected f = %v, dense %v", rep.ProjectedObjective, denseObjective(P, n, proj, k))
			}
			if gap, _ := denseGap(P, n, proj, k); relErr(rep.ProjectedGap, gap) > 1e-7 {
				t.Errorf("projected gap = %v, dense %v", rep.ProjectedGap, gap)
			}
		})
	}
}

// TestPenaltyDescends checks that the penalty method gets close to what
// projected gradient descent reaches from the same start: the projection of
// its point is a decent feasible point.
func TestPenaltyDescends(t *testing.T) {
	const n, k = 60, 3
	d, _ := NewDense(n, kernel(n, 55))
	w := randomW(n, k, 56)
	set := Settings{MaxIter: 25, GapTol: -1}
	pen := &Penalty{}
	res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, pen)
	if err != nil {
		t.Fatal(err)
	}
	rep := pen.Report()
	w0 := randomW(n, k, 56)
	f0 := denseObjective(kernel(n, 55), n, w0, k)
	pset := Settings{MaxIter: 2000, GapTol: 1e-9}
	pres, err := Minimize(context.Background(), Problem{P: d, K: k}, w0, &pset, &PGD{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("start %v; penalty f %v (projected %v, row error %v, min entry %v); PGD %v",
		f0, res.Objective, rep.ProjectedObjective, rep.MaxRowSumError, rep.MinEntry, pres.Objective)
	if !(rep.ProjectedObjective < f0) || math.Abs(rep.ProjectedObjective-pres.Objective) > 0.01*(f0-pres.Objective) {
		t.Errorf("penalty's projected f = %v, PGD %v, start %v", rep.ProjectedObjective, pres.Objective, f0)
	}
}

func TestPenaltyStopRules(t *testing.T) {
	const n, k = 40, 3
	d, _ := NewDense(n, kernel(n, 57))
	for _, tc := range []struct {
		name       string
		set        func(*Settings)
		want       Status
		wantRounds int
		wantPasses int // 0: not checked
	}{
		{name: "max-iter 0", set: func(s *Settings) { s.MaxIter = -1 }, want: IterationLimit, wantPasses: 2},
		{name: "gap at the feasible start", set: func(s *Settings) { s.GapTol = 1e9 }, want: GapTolerance, wantPasses: 2},
		{name: "huge ftol", set: func(s *Settings) { s.FuncTol = 1e9 }, want: FunctionConvergence, wantRounds: 1},
		{name: "pass budget", set: func(s *Settings) { s.MaxPasses = 7 }, want: IterationLimit, wantRounds: 1, wantPasses: 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := Settings{MaxIter: 10, GapTol: -1}
			tc.set(&set)
			res, err := Minimize(context.Background(), Problem{P: d, K: k}, randomW(n, k, 58), &set, &Penalty{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.want || res.Iterations != tc.wantRounds || (tc.wantPasses > 0 && res.Passes != tc.wantPasses) {
				t.Fatalf("status %v after %d rounds and %d passes, want %v after %d rounds and %d passes",
					res.Status, res.Iterations, res.Passes, tc.want, tc.wantRounds, tc.wantPasses)
			}
		})
	}
}

func TestPenaltySameBitsAnyWorkers(t *testing.T) {
	const n, k = chunkRows + 100, 3
	d, _ := NewDense(n, kernel(n, 59))
	testWorkersSameW(t, Problem{P: d, K: k}, 60, Settings{MaxIter: 2}, func() Method { return &Penalty{InnerIter: 5} }, 1, 2)
}

func TestPenaltyErrors(t *testing.T) {
	const n, k = 20, 3
	d, _ := NewDense(n, kernel(n, 61))
	p := Problem{P: d, K: k}
	testRefusals(t, func() *Penalty { return &Penalty{} }, []refusal[*Penalty]{
		{name: "wrong size", p: p, w: randomW(n, k+1, 1)},
		{name: "no inner iterations", p: p, w: randomW(n, k, 1), set: func(s *Settings, m *Penalty) { m.InnerIter = -1 }},
		{name: "negative coefficient", p: p, w: randomW(n, k, 1), set: func(s *Settings, m *Penalty) { m.Coef = -1 }},
		{name: "shrinking factor", p: p, w: randomW(n, k, 1), set: func(s *Settings, m *Penalty) { m.Factor = 0.5 }},
		{name: "no memory", p: p, w: randomW(n, k, 1), set: func(s *Settings, m *Penalty) { m.Memory = -1 }},
		{name: "negative budget", p: p, w: randomW(n, k, 1), set: func(s *Settings, m *Penalty) { s.MaxPasses = -1 }},
		{name: "negative ftol", p: p, w: randomW(n, k, 1), set: func(s *Settings, m *Penalty) { s.FuncTol = -1 }},
		{name: "short projection storage", p: p, w: randomW(n, k, 1), set: func(s *Settings, m *Penalty) { m.Proj = make([]float64, 3) }},
	})
}

// TestPenaltyPassFailures checks that a failing or canceled pass inside an
// L-BFGS round ends the run with its error.
func TestPenaltyPassFailures(t *testing.T) {
	testPassFailures(t, 62, []passFailure{
		{name: "first pass", failAt: 1},
		{name: "inside a round", failAt: 5},
		{name: "canceled inside a round", failAt: 5, cancel: true},
	}, false, func(ctx context.Context, p Problem, w []float64) (*Result, error) {
		set := Settings{MaxIter: 5, GapTol: -1}
		return Minimize(ctx, p, w, &set, &Penalty{})
	})
}
