package fw

import (
	"context"
	"fmt"
	"math"
	"time"
)

// PGDSettings control a run of MinimizePGD, projected gradient descent with
// a backtracking line search, the first baseline of the paper's experiments.
// Start from DefaultPGDSettings.
type PGDSettings struct {
	// Settings holds the stopping rules (GapTol, FuncTol, MaxIter), Workers,
	// the Recorder and the storage: PW for P·W and PS for P·W' at the trial
	// point. Step and Refresh are not used: every iterate's P·W is computed
	// by a full pass. The Recorder's Step is the step length η taken.
	Settings

	// InitialStep is the step length η of the first trial. If 0, it is 1/L
	// for the bound L = c + 3 λ on the gradient's Lipschitz constant at the
	// initial point, where c is the largest row sum of P and λ the largest
	// row sum of WᵀW (>= its largest eigenvalue).
	InitialStep float64
	// Shrink multiplies η after a trial without sufficient decrease; in (0, 1).
	Shrink float64
	// Grow multiplies η after an accepted step, so that the next trial
	// starts from a longer step; >= 1.
	Grow float64
	// Armijo is σ in the sufficient decrease test on the projected step,
	// f(W') <= f(W) + σ <G, W' - W>; in (0, 1).
	Armijo float64
	// MaxBacktracks is the number of trials of an iteration. If none
	// decreases the objective enough, W is stationary to working precision
	// and the run stops with FunctionConvergence.
	MaxBacktracks int
	// Trial is storage for the n×k trial point; nil allocates it.
	Trial []float64
}

// DefaultPGDSettings returns the stopping rules of DefaultSettings with the
// automatic first step, Shrink 0.5, Grow 2, Armijo 1e-4 and 30 trials an
// iteration.
func DefaultPGDSettings() PGDSettings {
	return PGDSettings{Settings: DefaultSettings(), Shrink: 0.5, Grow: 2, Armijo: 1e-4, MaxBacktracks: 30}
}

// MinimizePGD minimizes f(W) = 1/4 ||P - W Wᵀ||_F^2 over row-stochastic
// W >= 0 by projected gradient descent from the feasible point w, which it
// overwrites with the solution.
//
// An iteration tries W' = Proj(W - η G), G = W (WᵀW) - P W, with every row
// projected onto the simplex, and accepts it if f(W') <= f(W) + σ <G, W' - W>;
// otherwise it shrinks η and tries again. Every trial costs a full P·W' pass,
// O(n^2 k), and Result.Passes counts them all; an accepted trial's pass gives
// the next iterate's gradient, so nothing else is computed over P. After an
// accepted step η grows again. The objective never increases.
//
// The stopping rules are those of Minimize, tested in the same order on the
// same quantities, and the Frank-Wolfe gap is computed at every iterate (an
// O(n k^2) row pass), so the runs of the two methods can be compared
// iteration by iteration. Errors are as for Minimize.
func MinimizePGD(ctx context.Context, p Problem, w []float64, settings *PGDSettings) (*Result, error) {
	const method = "pgd"
	n, k, err := checkProblem(method, p, w)
	if err != nil {
		return nil, err
	}
	set := DefaultPGDSettings()
	if settings != nil {
		set = *settings
	}
	if err := checkStops(method, &set.Settings); err != nil {
		return nil, err
	}
	if !(set.Shrink > 0 && set.Shrink < 1) || !(set.Grow >= 1) || math.IsInf(set.Grow, 0) ||
		!(set.Armijo > 0 && set.Armijo < 1) || set.MaxBacktracks < 1 ||
		!(set.InitialStep >= 0) || math.IsInf(set.InitialStep, 0) {
		return nil, fmt.Errorf("%s: want 0 < Shrink < 1, Grow >= 1, 0 < Armijo < 1, MaxBacktracks >= 1 and a finite InitialStep >= 0", method)
	}
	r := &pgd{ctx: ctx, p: p.P, n: n, k: k, w: w, set: set, sel: make([]int32, n), start: time.Now()}
	if r.pw, err = storage(set.PW, n*k, "pgd: P·W"); err != nil {
		return nil, err
	}
	if r.pwt, err = storage(set.PS, n*k, "pgd: P·S"); err != nil {
		return nil, err
	}
	if r.wt, err = storage(set.Trial, n*k, "pgd: trial"); err != nil {
		return nil, err
	}
	return r.run()
}

type pgd struct {
	ctx     context.Context
	p       Affinity
	n, k    int
	w, pw   []float64 // the iterate and its P·W
	wt, pwt []float64 // the trial point and its P·W
	sel     []int32
	set     PGDSettings
	start   time.Time
	res     Result
}

func (r *pgd) run() (*Result, error) {
	res, set := &r.res, &r.set
	if err := firstPass(r.ctx, r.p, r.pw, r.w, r.k, res); err != nil {
		return r.fail(err)
	}
	cur, err := evaluate(r.ctx, set.Workers, r.w, r.pw, r.n, r.k, res.FrobSq, r.sel)
	if err != nil {
		return r.fail(err)
	}
	eta := set.InitialStep
	if eta == 0 {
		eta = 1 / (res.MaxRowSum + 3*maxRowSum(cur.a, r.k))
	}
	fprev := math.NaN()
	for t := 0; ; t++ {
		if math.IsNaN(cur.f) || math.IsInf(cur.f, 0) {
			return r.fail(fmt.Errorf("pgd: iteration %d: %w", t, errNonFinite))
		}
		res.Status = stopStatus(&set.Settings, t, cur.f, fprev, cur.gap)
		var next point
		var passTime time.Duration
		if res.Status == NotTerminated {
			var ok bool
			next, passTime, ok, err = r.search(cur, &eta)
			if err != nil {
				return r.fail(err)
			}
			if !ok {
				res.Status = FunctionConvergence
			}
		}
		if res.Status != NotTerminated {
			if err := r.record(Iteration{Iter: t, Objective: cur.f, Gap: cur.gap, Final: true, PassTime: passTime}); err != nil {
				return r.fail(err)
			}
			break
		}
		if err := r.record(Iteration{Iter: t, Objective: cur.f, Gap: cur.gap, Step: eta, PassTime: passTime}); err != nil {
			return r.fail(err)
		}
		copy(r.w, r.wt)
		r.pw, r.pwt = r.pwt, r.pw
		fprev, cur = cur.f, next
		eta *= set.Grow
		res.Iterations = t + 1
	}
	res.Objective, res.Gap = cur.f, cur.gap
	res.Runtime = time.Since(r.start)
	return res, nil
}

// search runs the backtracking line search from the iterate cur, starting
// from the step *eta and leaving in it the step accepted. It returns the
// trial point's evaluation (the point is in wt, its P·W in pwt), the time of
// the passes, and false if no trial decreased the objective enough.
func (r *pgd) search(cur point, eta *float64) (point, time.Duration, bool, error) {
	set := &r.set
	var passTime time.Duration
	for range set.MaxBacktracks {
		gd, dd, err := r.trial(cur.a, *eta)
		if err != nil {
			return point{}, passTime, false, err
		}
		if dd == 0 {
			// The projected step does not move: W is stationary.
			return point{}, passTime, false, nil
		}
		begin := time.Now()
		if _, err := r.p.Mul(r.ctx, r.pwt, r.wt, r.k, nil); err != nil {
			return point{}, passTime, false, err
		}
		r.res.Passes++
		passTime += time.Since(begin)
		next, err := evaluate(r.ctx, set.Workers, r.wt, r.pwt, r.n, r.k, r.res.FrobSq, r.sel)
		if err != nil {
			return point{}, passTime, false, err
		}
		if next.f <= cur.f+set.Armijo*gd {
			return next, passTime, true, nil
		}
		*eta *= set.Shrink
	}
	return point{}, passTime, false, nil
}

// trial sets wt = Proj(W - η G) row by row and returns <G, wt - W> and
// ||wt - W||_F^2; a is WᵀW.
func (r *pgd) trial(a []float64, eta float64) (gd, dd float64, err error) {
	k := r.k
	type sums struct {
		gd, dd float64
		g, buf []float64
	}
	err = rowPass(r.ctx, r.set.Workers, r.n,
		func() *sums { return &sums{g: make([]float64, k), buf: make([]float64, k)} },
		func(lo, hi int, s *sums) {
			s.gd, s.dd = 0, 0
			for i := lo; i < hi; i++ {
				wi, pwi, ti := r.w[i*k:(i+1)*k], r.pw[i*k:(i+1)*k], r.wt[i*k:(i+1)*k]
				gradRow(s.g, wi, pwi, a)
				for j, v := range wi {
					ti[j] = v - eta*s.g[j]
				}
				projectSimplex(ti, s.buf)
				for j, v := range wi {
					d := ti[j] - v
					s.gd += s.g[j] * d
					s.dd += d * d
				}
			}
		},
		func(s *sums) { gd += s.gd; dd += s.dd })
	return gd, dd, err
}

func (r *pgd) fail(err error) (*Result, error) {
	r.res.Runtime = time.Since(r.start)
	return &r.res, err
}

func (r *pgd) record(it Iteration) error {
	return emit(r.set.Recorder, it, r.res.Passes, r.start)
}
