package fw

import (
	"context"
	"fmt"
	"math"
	"time"
)

// PGD is projected gradient descent with a backtracking line search, the
// first baseline of the paper's experiments.
//
// An iteration tries W' = Proj(W - η G), G = W (WᵀW) - P W, with every row
// projected onto the simplex, and accepts it if f(W') <= f(W) + σ <G, W' - W>;
// otherwise it shrinks η and tries again. Every trial costs a full P·W' pass,
// O(n^2 k), and Result.Passes counts them all; an accepted trial's pass gives
// the next iterate's gradient, so nothing else is computed over P, and the
// Frank-Wolfe gap is exact at every iterate (an O(n k^2) row pass), so that
// runs can be compared with FrankWolfe's iteration by iteration. After an
// accepted step η grows again. The objective never increases. If no trial
// decreases the objective enough, W is stationary to working precision and
// the run stops with FunctionConvergence. The record's Step is the step
// length η taken.
//
// The zero value is the method with the automatic first step, Shrink 0.5,
// Grow 2, Armijo 1e-4 and 30 trials an iteration.
type PGD struct {
	// InitialStep is the step length η of the first trial. If 0, it is 1/L
	// for the bound L = c + 3 λ on the gradient's Lipschitz constant at the
	// initial point, where c is the largest row sum of P and λ the largest
	// row sum of WᵀW (>= its largest eigenvalue).
	InitialStep float64
	// Shrink multiplies η after a trial without sufficient decrease; in
	// (0, 1); 0.5 if 0.
	Shrink float64
	// Grow multiplies η after an accepted step, so that the next trial
	// starts from a longer step; >= 1; 2 if 0.
	Grow float64
	// Armijo is σ in the sufficient decrease test; in (0, 1); 1e-4 if 0.
	Armijo float64
	// MaxBacktracks is the number of trials of an iteration; 30 if 0.
	MaxBacktracks int
	// Trial and PTrial are storage for the n×k trial point and its P·W;
	// nil allocates them.
	Trial, PTrial []float64

	run     *Run
	wt, pwt []float64 // the trial point and its P·W
	sel     []int32
	cur     point // the iterate's evaluation
	eta     float64
}

// params returns the parameters in force, with the defaults of the zero
// fields.
func (r *PGD) params() (shrink, grow, armijo float64, tries int, err error) {
	shrink, grow, armijo, tries = or(r.Shrink, 0.5), or(r.Grow, 2), or(r.Armijo, 1e-4), or(r.MaxBacktracks, 30)
	if !(shrink > 0 && shrink < 1) || !(grow >= 1) || math.IsInf(grow, 0) ||
		!(armijo > 0 && armijo < 1) || tries < 1 ||
		!(r.InitialStep >= 0) || math.IsInf(r.InitialStep, 0) {
		return 0, 0, 0, 0, fmt.Errorf("pgd: want 0 < Shrink < 1, Grow >= 1, 0 < Armijo < 1, MaxBacktracks >= 1 and a finite InitialStep >= 0")
	}
	return shrink, grow, armijo, tries, nil
}

// or returns v, or def if v is 0.
func or[T int | float64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Init computes P·W at the starting point, evaluates it and sets the first
// step length.
func (r *PGD) Init(ctx context.Context, run *Run) error {
	if _, _, _, _, err := r.params(); err != nil {
		return err
	}
	var err error
	nk := run.N * run.K
	if r.wt, err = storage(r.Trial, nk, "pgd: trial"); err != nil {
		return err
	}
	if r.pwt, err = storage(r.PTrial, nk, "pgd: trial P·W"); err != nil {
		return err
	}
	r.run, r.sel = run, make([]int32, run.N)
	if err := run.FirstPass(ctx); err != nil {
		return err
	}
	if r.cur, err = evaluate(ctx, run.Workers, run.W, run.PW, run.N, run.K, run.FrobSq, r.sel); err != nil {
		return err
	}
	r.eta = r.InitialStep
	if r.eta == 0 {
		r.eta = 1 / (run.MaxRowSum + float64(3*maxRowSum(r.cur.a, run.K)))
	}
	return nil
}

// Estimate returns the objective and the exact gap at the iterate.
func (r *PGD) Estimate() Estimate {
	return Estimate{Objective: r.cur.f, Gap: r.cur.gap, Model: r.cur.model(), Exact: true}
}

// Refresh does nothing: P·W is computed by a pass at every iterate.
func (r *PGD) Refresh(context.Context) error { return nil }

// Iterate runs the line search and takes the step it accepts.
func (r *PGD) Iterate(ctx context.Context, it *Iteration) (Status, error) {
	_, grow, _, _, _ := r.params()
	next, passTime, ok, err := r.search(ctx, r.cur, &r.eta)
	it.PassTime = passTime
	if err != nil {
		return NotTerminated, err
	}
	if !ok {
		return FunctionConvergence, nil
	}
	it.Step = r.eta
	run := r.run
	copy(run.W, r.wt)
	run.PW, r.pwt = r.pwt, run.PW
	r.cur = next
	r.eta *= grow
	return NotTerminated, nil
}

// search runs the backtracking line search from the iterate cur, starting
// from the step *eta and leaving in it the step accepted. It returns the
// trial point's evaluation (the point is in wt, its P·W in pwt), the time of
// the passes, and false if no trial decreased the objective enough.
func (r *PGD) search(ctx context.Context, cur point, eta *float64) (point, time.Duration, bool, error) {
	shrink, _, armijo, tries, _ := r.params()
	run := r.run
	var passTime time.Duration
	for range tries {
		gd, dd, err := r.trial(ctx, cur.a, *eta)
		if err != nil {
			return point{}, passTime, false, err
		}
		if dd == 0 {
			// The projected step does not move: W is stationary.
			return point{}, passTime, false, nil
		}
		begin := time.Now()
		if err := run.Mul(ctx, r.pwt, r.wt); err != nil {
			return point{}, passTime, false, err
		}
		passTime += time.Since(begin)
		next, err := evaluate(ctx, run.Workers, r.wt, r.pwt, run.N, run.K, run.FrobSq, r.sel)
		if err != nil {
			return point{}, passTime, false, err
		}
		if next.f <= cur.f+float64(armijo*gd) {
			return next, passTime, true, nil
		}
		*eta *= shrink
	}
	return point{}, passTime, false, nil
}

// trial sets wt = Proj(W - η G) row by row and returns <G, wt - W> and
// ||wt - W||_F^2; a is WᵀW.
func (r *PGD) trial(ctx context.Context, a []float64, eta float64) (gd, dd float64, err error) {
	run := r.run
	k := run.K
	type sums struct {
		gd, dd float64
		g, buf []float64
	}
	err = rowPass(ctx, run.Workers, run.N,
		func() *sums { return &sums{g: make([]float64, k), buf: make([]float64, k)} },
		func(lo, hi int, s *sums) {
			s.gd, s.dd = 0, 0
			for i := lo; i < hi; i++ {
				wi, pwi, ti := run.W[i*k:(i+1)*k], run.PW[i*k:(i+1)*k], r.wt[i*k:(i+1)*k]
				gradRow(s.g, wi, pwi, a)
				for j, v := range wi {
					ti[j] = v - float64(eta*s.g[j])
				}
				projectSimplex(ti, s.buf)
				for j, v := range wi {
					d := ti[j] - v
					s.gd += float64(s.g[j] * d)
					s.dd += float64(d * d)
				}
			}
		},
		func(s *sums) { gd += s.gd; dd += s.dd })
	return gd, dd, err
}
