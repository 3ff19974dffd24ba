package fw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/optimize"
)

// PenaltySettings control a run of MinimizePenalty, the penalty method of
// SOF (Zhao et al. 2015), the second baseline of the paper's experiments.
// Start from DefaultPenaltySettings.
type PenaltySettings struct {
	// Settings holds the stopping rules, applied to the outer rounds:
	// FuncTol to the change of f (without the penalties) between rounds,
	// MaxIter to the number of rounds, GapTol only at an iterate that is
	// feasible (every row on the simplex within 1e-9), where the gap is a
	// certificate. It also holds Workers, the Recorder and the storage: PW
	// for P·W, PS for the projection of the final point. Step and Refresh
	// are not used. The Recorder's Step is the penalty coefficient μ of the
	// round that starts from the iterate, and its PassTime the time of the
	// passes of the round that produced it (records are made when an
	// iterate is known, before the next round).
	Settings

	// InnerIter caps the L-BFGS iterations of one round (50 in the paper).
	InnerIter int
	// Coef is the penalty coefficient μ of the first round.
	Coef float64
	// Factor multiplies μ after every round (2 in the paper).
	Factor float64
	// Memory is the number of L-BFGS correction pairs; each costs 2·n·k
	// float64 of memory.
	Memory int
	// MaxPasses, if > 0, stops the run with IterationLimit once it has
	// made this many tile passes (the final evaluation of the projection
	// not counted): a budget for large problems, where a round costs up to
	// InnerIter dense passes.
	MaxPasses int
}

// DefaultPenaltySettings returns the stopping rules of DefaultSettings with
// the paper's 50 inner iterations and factor 2, μ = 1 at the start and an
// L-BFGS memory of 10.
func DefaultPenaltySettings() PenaltySettings {
	return PenaltySettings{Settings: DefaultSettings(), InnerIter: 50, Coef: 1, Factor: 2, Memory: 10}
}

// PenaltyResult is the outcome of MinimizePenalty. The embedded Result is
// that of the final point, which is in general not feasible: Objective is
// f there and Gap is <G, W> - sum_i min_j G_ij, which certifies nothing at
// an infeasible point.
type PenaltyResult struct {
	Result
	// InnerIterations counts the L-BFGS iterations of all rounds.
	InnerIterations int
	// LineSearchStops counts the rounds that ended early because the
	// L-BFGS line search could make no more progress; the round's best
	// point is kept.
	LineSearchStops int
	// Coef is the penalty coefficient μ of the last round.
	Coef float64
	// MaxRowSumError is max_i |sum_j W_ij - 1| at the final point.
	MaxRowSumError float64
	// MinEntry is the smallest entry of the final W if it is negative,
	// else 0.
	MinEntry float64
	// ProjectedObjective and ProjectedGap are f and the Frank-Wolfe gap at
	// the final point with every row projected onto the simplex: a
	// feasible point, comparable with the other methods' results. Their
	// evaluation takes one more pass, counted in Passes.
	ProjectedObjective, ProjectedGap float64
}

// Feasible reports whether the final point is feasible within tol.
func (r *PenaltyResult) Feasible(tol float64) bool {
	return r.MaxRowSumError <= tol && r.MinEntry >= -tol
}

// MinimizePenalty minimizes f(W) = 1/4 ||P - W Wᵀ||_F^2 by the penalty
// method of SOF from the feasible point w, which it overwrites with the
// final point (not projected; see PenaltyResult).
//
// Round t minimizes, without constraints, the penalized objective
//
//	F(W) = f(W) + μ_t/2 (||W 1 - 1||^2 + ||min(W, 0)||_F^2)
//
// by L-BFGS (gonum's optimize package) from the previous round's point,
// for at most InnerIter iterations, then sets μ_{t+1} = Factor·μ_t. Every new
// point the L-BFGS line search evaluates costs a full P·W pass, O(n^2 k);
// Result.Passes counts them all. Errors are as for Minimize.
func MinimizePenalty(ctx context.Context, p Problem, w []float64, settings *PenaltySettings) (*PenaltyResult, error) {
	const method = "penalty"
	n, k, err := checkProblem(method, p, w)
	if err != nil {
		return nil, err
	}
	set := DefaultPenaltySettings()
	if settings != nil {
		set = *settings
	}
	if err := checkStops(method, &set.Settings); err != nil {
		return nil, err
	}
	if set.InnerIter < 1 || !(set.Coef > 0) || math.IsInf(set.Coef, 0) || !(set.Factor >= 1) ||
		math.IsInf(set.Factor, 0) || set.Memory < 1 || set.MaxPasses < 0 {
		return nil, fmt.Errorf("%s: want InnerIter >= 1, a finite Coef > 0, a finite Factor >= 1, Memory >= 1 and MaxPasses >= 0", method)
	}
	r := &penalty{ctx: ctx, p: p.P, n: n, k: k, w: w, set: set, sel: make([]int32, n), start: time.Now()}
	if r.pw, err = storage(set.PW, n*k, "penalty: P·W"); err != nil {
		return nil, err
	}
	if r.proj, err = storage(set.PS, n*k, "penalty: P·S"); err != nil {
		return nil, err
	}
	return r.run()
}

type penalty struct {
	ctx   context.Context
	p     Affinity
	n, k  int
	w, pw []float64 // the last point evaluated and its P·W
	a     []float64 // WᵀW at w
	proj  []float64 // the projection of the final point
	sel   []int32
	set   PenaltySettings
	start time.Time
	res   PenaltyResult

	mu       float64       // the current penalty coefficient
	passTime time.Duration // of the passes since the last record
	evalErr  error         // the first failure inside an L-BFGS round
}

func (r *penalty) run() (*PenaltyResult, error) {
	res, set := &r.res, &r.set
	begin := time.Now()
	if err := firstPass(r.ctx, r.p, r.pw, r.w, r.k, &res.Result); err != nil {
		return r.fail(err)
	}
	r.passTime = time.Since(begin)
	var err error
	if r.a, err = gram(r.ctx, set.Workers, r.w, r.n, r.k); err != nil {
		return r.fail(err)
	}
	lbfgs := &optimize.LBFGS{Store: set.Memory}
	r.mu = set.Coef
	fprev := math.NaN()
	var cur point
	for t := 0; ; t++ {
		if cur, err = evaluate(r.ctx, set.Workers, r.w, r.pw, r.n, r.k, res.FrobSq, r.sel); err != nil {
			return r.fail(err)
		}
		if math.IsNaN(cur.f) || math.IsInf(cur.f, 0) {
			return r.fail(fmt.Errorf("penalty: round %d: %w", t, errNonFinite))
		}
		gap := math.Inf(1) // the gap test applies at feasible points only
		if rowErr, minEntry := feasibility(r.w, r.k); rowErr <= 1e-9 && minEntry >= -1e-9 {
			gap = cur.gap
		}
		res.Status = stopStatus(&set.Settings, t, cur.f, fprev, gap)
		if res.Status == NotTerminated && set.MaxPasses > 0 && res.Passes >= set.MaxPasses {
			res.Status = IterationLimit
		}
		it := Iteration{Iter: t, Objective: cur.f, Gap: cur.gap, Step: r.mu, PassTime: r.passTime,
			Final: res.Status != NotTerminated}
		if it.Final {
			it.Step = 0
		}
		if err := r.record(it); err != nil {
			return r.fail(err)
		}
		r.passTime = 0
		if it.Final {
			break
		}
		if err := r.round(lbfgs); err != nil {
			return r.fail(err)
		}
		res.Coef = r.mu
		r.mu *= set.Factor
		fprev = cur.f
		res.Iterations = t + 1
	}
	res.Objective, res.Gap = cur.f, cur.gap
	res.MaxRowSumError, res.MinEntry = feasibility(r.w, r.k)

	// The projection of the final point, evaluated by one more pass.
	copy(r.proj, r.w)
	if err := projectRowsPass(r.ctx, set.Workers, r.proj, r.n, r.k); err != nil {
		return r.fail(err)
	}
	pw := r.pw // the final point's P·W is no longer needed
	if _, err := r.p.Mul(r.ctx, pw, r.proj, r.k, nil); err != nil {
		return r.fail(err)
	}
	res.Passes++
	pp, err := evaluate(r.ctx, set.Workers, r.proj, pw, r.n, r.k, res.FrobSq, r.sel)
	if err != nil {
		return r.fail(err)
	}
	res.ProjectedObjective, res.ProjectedGap = pp.f, pp.gap
	res.Runtime = time.Since(r.start)
	return res, nil
}

// round runs one L-BFGS minimization of the penalized objective from w and
// leaves its best point in w, with P·W and WᵀW evaluated there.
func (r *penalty) round(lbfgs *optimize.LBFGS) error {
	set := &r.set
	r.evalErr = nil
	prob := optimize.Problem{
		Func: func(x []float64) float64 {
			if err := r.at(x); err != nil {
				return math.NaN()
			}
			return r.penalized()
		},
		Grad: func(grad, x []float64) {
			if err := r.at(x); err != nil {
				clear(grad)
				return
			}
			r.gradient(grad)
		},
		Status: func() (optimize.Status, error) {
			if r.evalErr != nil {
				return optimize.Failure, r.evalErr
			}
			if err := r.ctx.Err(); err != nil {
				return optimize.Failure, err
			}
			return optimize.NotTerminated, nil
		},
	}
	ops := &optimize.Settings{
		MajorIterations: set.InnerIter,
		Converger:       optimize.NeverTerminate{},
	}
	if set.MaxPasses > 0 {
		ops.FuncEvaluations = max(1, set.MaxPasses-r.res.Passes)
	}
	x0 := slices.Clone(r.w)
	out, err := optimize.Minimize(prob, x0, ops, lbfgs)
	if r.evalErr != nil {
		return r.evalErr
	}
	if err != nil {
		if !isLineSearchStop(err) || out == nil {
			return fmt.Errorf("penalty: L-BFGS: %w", err)
		}
		r.res.LineSearchStops++
	}
	r.res.InnerIterations += out.MajorIterations
	return r.at(out.X)
}

// isLineSearchStop reports whether err says that the L-BFGS line search
// could make no more progress, the ordinary end of a round near a minimum at
// working precision.
func isLineSearchStop(err error) bool {
	return errors.Is(err, optimize.ErrLinesearcherFailure) || errors.Is(err, optimize.ErrNoProgress) ||
		errors.Is(err, optimize.ErrNonDescentDirection) || errors.Is(err, optimize.ErrLinesearcherBound)
}

// at makes x the current point: unless it is the point last evaluated, it
// copies x into w and computes P·W by a pass and WᵀW.
func (r *penalty) at(x []float64) error {
	if r.evalErr != nil {
		return r.evalErr
	}
	if slices.Equal(x, r.w) {
		return nil
	}
	copy(r.w, x)
	begin := time.Now()
	_, err := r.p.Mul(r.ctx, r.pw, r.w, r.k, nil)
	if err == nil {
		r.res.Passes++
		r.passTime += time.Since(begin)
		r.a, err = gram(r.ctx, r.set.Workers, r.w, r.n, r.k)
	}
	if err != nil {
		r.evalErr = err
		// w no longer matches pw: poison the cache.
		r.w[0] = math.NaN()
	}
	return err
}

// penalized returns F at the current point.
func (r *penalty) penalized() float64 {
	k := r.k
	type sums struct{ wpw, rows, neg float64 }
	var tot sums
	err := rowPass(r.ctx, r.set.Workers, r.n, func() *sums { return new(sums) },
		func(lo, hi int, s *sums) {
			*s = sums{}
			for i := lo; i < hi; i++ {
				wi := r.w[i*k : (i+1)*k]
				s.wpw += dot(wi, r.pw[i*k:(i+1)*k])
				var sum float64
				for _, v := range wi {
					sum += v
					if v < 0 {
						s.neg += v * v
					}
				}
				s.rows += (sum - 1) * (sum - 1)
			}
		},
		func(s *sums) { tot.wpw += s.wpw; tot.rows += s.rows; tot.neg += s.neg })
	if err != nil {
		r.evalErr = err
		return math.NaN()
	}
	f := (r.res.FrobSq - 2*tot.wpw + dot(r.a, r.a)) / 4
	return f + r.mu/2*(tot.rows+tot.neg)
}

// gradient sets grad = G + μ (W 1 - 1) 1ᵀ + μ min(W, 0) at the current point.
func (r *penalty) gradient(grad []float64) {
	k := r.k
	err := rowPass(r.ctx, r.set.Workers, r.n, func() struct{} { return struct{}{} },
		func(lo, hi int, _ struct{}) {
			for i := lo; i < hi; i++ {
				wi, gi := r.w[i*k:(i+1)*k], grad[i*k:(i+1)*k]
				gradRow(gi, wi, r.pw[i*k:(i+1)*k], r.a)
				var sum float64
				for _, v := range wi {
					sum += v
				}
				for j, v := range wi {
					gi[j] += r.mu * (sum - 1)
					if v < 0 {
						gi[j] += r.mu * v
					}
				}
			}
		}, func(struct{}) {})
	if err != nil {
		r.evalErr = err
		clear(grad)
	}
}

// feasibility returns max_i |sum_j W_ij - 1| and the smallest entry of W if
// negative, else 0.
func feasibility(w []float64, k int) (rowErr, minEntry float64) {
	for i := 0; i < len(w); i += k {
		var sum float64
		for _, v := range w[i : i+k] {
			sum += v
			minEntry = min(minEntry, v)
		}
		rowErr = max(rowErr, math.Abs(sum-1))
	}
	return rowErr, minEntry
}

func (r *penalty) fail(err error) (*PenaltyResult, error) {
	r.res.Runtime = time.Since(r.start)
	return &r.res, err
}

func (r *penalty) record(it Iteration) error {
	return emit(r.set.Recorder, it, r.res.Passes, r.start)
}
