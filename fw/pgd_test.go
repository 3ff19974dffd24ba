package fw

import (
	"context"
	"math"
	"slices"
	"testing"
)

// densePGD is the reference: projected gradient descent with the same
// backtracking rule, from the definitions with gonum, projecting by
// bisection. It returns f at each iterate and the steps taken.
func densePGD(P []float64, n int, w []float64, k, iters int, eta float64) (fs, steps []float64) {
	const shrink, grow, sigma = 0.5, 2.0, 1e-4
	f := denseObjective(P, n, w, k)
	for range iters {
		fs = append(fs, f)
		G := denseGradient(P, n, w, k)
		for {
			trial := make([]float64, n*k)
			var gd float64
			for i := range n {
				v := make([]float64, k)
				for j := range k {
					v[j] = w[i*k+j] - float64(eta*G.At(i, j))
				}
				copy(trial[i*k:], bisectProjection(v))
				for j := range k {
					gd += float64(G.At(i, j) * (trial[i*k+j] - w[i*k+j]))
				}
			}
			ft := denseObjective(P, n, trial, k)
			if ft <= f+float64(sigma*gd) {
				copy(w, trial)
				f = ft
				steps = append(steps, eta)
				eta *= grow
				break
			}
			eta *= shrink
		}
	}
	return append(fs, f), steps
}

// TestPGDMatchesDenseReference runs PGD and the dense reference from
// the same start and compares their objectives, steps and final points, and
// checks that the objective never increases, the rows stay on the simplex
// and the passes are counted.
func TestPGDMatchesDenseReference(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n, k    int
		workers int
		eta     float64 // 0: automatic
	}{
		{name: "k=3", n: 60, k: 3, workers: 1},
		{name: "k=7 two workers", n: 150, k: 7, workers: 2},
		{name: "given long first step", n: 80, k: 4, workers: 2, eta: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const iters = 12
			P := kernel(tc.n, 31)
			d, err := NewDense(tc.n, P)
			if err != nil {
				t.Fatal(err)
			}
			w := randomW(tc.n, tc.k, 32)
			set := Settings{MaxIter: iters, GapTol: -1, Workers: tc.workers}
			var its []Iteration
			set.Recorder = func(it Iteration) error { its = append(its, it); return nil }
			res, err := Minimize(context.Background(), Problem{P: d, K: tc.k}, w, &set, &PGD{InitialStep: tc.eta})
			if err != nil {
				t.Fatal(err)
			}
			eta := tc.eta
			if eta == 0 {
				eta = firstStep(P, tc.n, randomW(tc.n, tc.k, 32), tc.k)
			}
			ref := randomW(tc.n, tc.k, 32)
			fs, steps := densePGD(P, tc.n, ref, tc.k, iters, eta)

			if res.Status != IterationLimit || res.Iterations != iters || len(its) != iters+1 {
				t.Fatalf("status %v after %d iterations, %d records", res.Status, res.Iterations, len(its))
			}
			for i, it := range its {
				if e := relErr(it.Objective, fs[i]); e > 1e-10 {
					t.Errorf("iteration %d: f = %v, reference %v", i, it.Objective, fs[i])
				}
				if i < iters && relErr(it.Step, steps[i]) > 0 {
					t.Errorf("iteration %d: step %v, reference %v", i, it.Step, steps[i])
				}
				if i > 0 && it.Objective > its[i-1].Objective {
					t.Errorf("iteration %d: f rose from %v to %v", i, its[i-1].Objective, it.Objective)
				}
				if i > 0 && i < iters && it.Passes <= its[i-1].Passes {
					t.Errorf("iteration %d: passes %d after %d", i, it.Passes, its[i-1].Passes)
				}
			}
			// Each iteration takes one pass per trial: 1 + log2 of the
			// steps' shrinkage, counting the growth after each success.
			wantPasses := 1
			prev := eta
			for _, s := range steps {
				wantPasses += 1 + int(math.Round(math.Log2(prev/s)))
				prev = 2 * s
			}
			if res.Passes != wantPasses || its[iters].Passes != wantPasses {
				t.Errorf("passes %d (last record %d), want %d", res.Passes, its[iters].Passes, wantPasses)
			}
			if err := checkSimplex(w, tc.k, 1e-12); err != nil {
				t.Fatal(err)
			}
			for i := range w {
				if math.Abs(w[i]-ref[i]) > 1e-9 {
					t.Fatalf("W[%d] = %v, reference %v", i, w[i], ref[i])
				}
			}
			gap, _ := denseGap(P, tc.n, w, tc.k)
			if e := relErr(res.Objective, fs[iters]); e > 1e-10 {
				t.Errorf("result f = %v, reference %v", res.Objective, fs[iters])
			}
			if e := relErr(res.Gap, gap); e > 1e-8 {
				t.Errorf("result gap = %v, reference %v", res.Gap, gap)
			}
		})
	}
}

// firstStep is the automatic first step, 1/(c + 3 λ), from the dense P.
func firstStep(P []float64, n int, w []float64, k int) float64 {
	var c float64
	for i := range n {
		var s float64
		for _, v := range P[i*n : (i+1)*n] {
			s += v
		}
		c = max(c, s)
	}
	// λ is the largest row sum of WᵀW, its products rounded before they
	// are added (no fused multiply-add), as PGD's are.
	var lam float64
	for r := range k {
		var s float64
		for c := range k {
			var a float64
			for i := range n {
				a += float64(w[i*k+r] * w[i*k+c])
			}
			s += a
		}
		lam = max(lam, s)
	}
	return 1 / (c + float64(3*lam))
}

// TestPGDLongRun checks that a long run descends to a near-stationary point:
// the gap falls by orders of magnitude and f never rises.
func TestPGDLongRun(t *testing.T) {
	const n, k = 120, 4
	d, _ := NewDense(n, kernel(n, 41))
	w := randomW(n, k, 42)
	set := Settings{MaxIter: 1000, GapTol: 1e-8}
	var first, prev float64
	set.Recorder = func(it Iteration) error {
		if it.Iter == 0 {
			first = it.Gap
		} else if it.Objective > prev {
			t.Errorf("iteration %d: f rose from %v to %v", it.Iter, prev, it.Objective)
		}
		prev = it.Objective
		return nil
	}
	res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, &PGD{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gap %v after %d iterations (%v), from %v", res.Gap, res.Iterations, res.Status, first)
	if !(res.Gap < 1e-4*first) {
		t.Errorf("gap %v after %d iterations (%v), from %v", res.Gap, res.Iterations, res.Status, first)
	}
}

func TestPGDStopRules(t *testing.T) {
	const n, k = 50, 3
	d, _ := NewDense(n, kernel(n, 43))
	for _, tc := range []struct {
		name     string
		set      func(*Settings, *PGD)
		want     Status
		wantIter int
	}{
		{name: "max-iter 0", set: func(s *Settings, m *PGD) { s.MaxIter = -1 }, want: IterationLimit, wantIter: 0},
		{name: "max-iter 5", set: func(s *Settings, m *PGD) { s.MaxIter = 5 }, want: IterationLimit, wantIter: 5},
		{name: "gap tolerance at the start", set: func(s *Settings, m *PGD) { s.GapTol = 1e9 }, want: GapTolerance, wantIter: 0},
		{name: "huge ftol stops after one step", set: func(s *Settings, m *PGD) { s.FuncTol = 1e9 }, want: FunctionConvergence, wantIter: 1},
		{name: "one trial only, too long", set: func(s *Settings, m *PGD) { m.InitialStep, m.MaxBacktracks = 1e6, 1 }, want: FunctionConvergence, wantIter: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, m := Settings{MaxIter: 100, GapTol: -1}, &PGD{}
			tc.set(&set, m)
			var last Iteration
			set.Recorder = func(it Iteration) error { last = it; return nil }
			w := randomW(n, k, 44)
			w0 := slices.Clone(w)
			res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, m)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.want || res.Iterations != tc.wantIter || !last.Final || last.Iter != tc.wantIter {
				t.Fatalf("status %v after %d iterations, last record %+v; want %v after %d", res.Status, res.Iterations, last, tc.want, tc.wantIter)
			}
			if tc.wantIter == 0 && !slices.Equal(w, w0) {
				t.Fatal("W changed without an accepted step")
			}
		})
	}
}

// TestPGDSameBitsAnyWorkers checks that the worker count does not change a
// bit of the run, with more rows than one chunk of a row pass.
func TestPGDSameBitsAnyWorkers(t *testing.T) {
	const n, k = chunkRows + 300, 4
	d, _ := NewDense(n, kernel(n, 45))
	testWorkersSameW(t, Problem{P: d, K: k}, 46, Settings{MaxIter: 4}, func() Method { return &PGD{} }, 1, 2, 3)
}

func TestPGDErrors(t *testing.T) {
	const n, k = 20, 3
	d, _ := NewDense(n, kernel(n, 47))
	bad := randomW(n, k, 48)
	bad[4] = -0.1
	testRefusals(t, func() *PGD { return &PGD{} }, []refusal[*PGD]{
		{name: "no affinity", p: Problem{K: k}, w: randomW(n, k, 1)},
		{name: "k = 0", p: Problem{P: d}, w: randomW(n, k, 1)},
		{name: "wrong size", p: Problem{P: d, K: k}, w: randomW(n+1, k, 1)},
		{name: "infeasible start", p: Problem{P: d, K: k}, w: bad},
		{name: "NaN ftol", p: Problem{P: d, K: k}, w: randomW(n, k, 1), set: func(s *Settings, m *PGD) { s.FuncTol = math.NaN() }},
		{name: "shrink 1", p: Problem{P: d, K: k}, w: randomW(n, k, 1), set: func(s *Settings, m *PGD) { m.Shrink = 1 }},
		{name: "grow 0.5", p: Problem{P: d, K: k}, w: randomW(n, k, 1), set: func(s *Settings, m *PGD) { m.Grow = 0.5 }},
		{name: "armijo 1", p: Problem{P: d, K: k}, w: randomW(n, k, 1), set: func(s *Settings, m *PGD) { m.Armijo = 1 }},
		{name: "negative armijo", p: Problem{P: d, K: k}, w: randomW(n, k, 1), set: func(s *Settings, m *PGD) { m.Armijo = -1e-4 }},
		{name: "no trials", p: Problem{P: d, K: k}, w: randomW(n, k, 1), set: func(s *Settings, m *PGD) { m.MaxBacktracks = -1 }},
		{name: "negative step", p: Problem{P: d, K: k}, w: randomW(n, k, 1), set: func(s *Settings, m *PGD) { m.InitialStep = -1 }},
		{name: "short storage", p: Problem{P: d, K: k}, w: randomW(n, k, 1), set: func(s *Settings, m *PGD) { m.Trial = make([]float64, 3) }},
		{name: "short trial P·W storage", p: Problem{P: d, K: k}, w: randomW(n, k, 1), set: func(s *Settings, m *PGD) { m.PTrial = make([]float64, 3) }},
	})
}

// TestPGDPassFailures checks that a failing or canceled pass ends the run
// with its error and a Result that counts what was completed.
func TestPGDPassFailures(t *testing.T) {
	testPassFailures(t, 49, []passFailure{
		{name: "first pass", failAt: 1},
		{name: "a trial pass", failAt: 4},
		{name: "canceled", failAt: 3, cancel: true},
	}, false, func(ctx context.Context, p Problem, w []float64) (*Result, error) {
		set := Settings{MaxIter: 20, GapTol: -1}
		return Minimize(ctx, p, w, &set, &PGD{})
	})
}
