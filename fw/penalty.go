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

// Penalty is the penalty method of SOF (Zhao et al. 2015), the second
// baseline of the paper's experiments. Iteration t (a round) minimizes,
// without constraints, the penalized objective
//
//	F(W) = f(W) + μ_t/2 (||W 1 - 1||^2 + ||min(W, 0)||_F^2)
//
// by L-BFGS (gonum's optimize package) from the previous round's point,
// for at most InnerIter iterations, then sets μ_{t+1} = Factor·μ_t. Every
// new point the L-BFGS line search evaluates costs a full P·W pass,
// O(n^2 k); Result.Passes counts them all, and Settings.MaxPasses also
// bounds the evaluations of a round. The record's Step is the round's μ.
//
// The final point (the one Minimize leaves in w) is in general not
// feasible: the Result's Objective is f there and its Gap is
// <G, W> - sum_i min_j G_ij, which certifies nothing at an infeasible
// point, so a gap stop is tested only at iterates feasible within 1e-9.
// Report tells how far the point is from feasible and evaluates its
// projection onto the constraints, by one more pass.
//
// The zero value is the method with the paper's 50 inner iterations and
// factor 2, μ = 1 at the start and an L-BFGS memory of 10.
type Penalty struct {
	// InnerIter caps the L-BFGS iterations of one round; 50 if 0.
	InnerIter int
	// Coef is the penalty coefficient μ of the first round; 1 if 0.
	Coef float64
	// Factor multiplies μ after every round, >= 1; 2 if 0.
	Factor float64
	// Memory is the number of L-BFGS correction pairs, each 2·n·k float64
	// of memory; 10 if 0.
	Memory int
	// Proj is storage for the n×k projection of the final point; nil
	// allocates it.
	Proj []float64

	run      *Run
	inner    int
	factor   float64
	lbfgs    *optimize.LBFGS
	a        []float64 // WᵀW at W
	sel      []int32
	cur      point         // the evaluation of the iterate
	mu       float64       // the current penalty coefficient
	passTime time.Duration // of the passes of the current round
	evalErr  error         // the first failure inside an L-BFGS round
	report   PenaltyReport
}

// PenaltyReport is what a Penalty run adds to its Result.
type PenaltyReport struct {
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
	// evaluation takes one more pass, counted in Result.Passes.
	ProjectedObjective, ProjectedGap float64
}

// Feasible reports whether the final point is feasible within tol.
func (r *PenaltyReport) Feasible(tol float64) bool {
	return r.MaxRowSumError <= tol && r.MinEntry >= -tol
}

// Report returns the report of the last run, once Minimize has returned.
func (r *Penalty) Report() PenaltyReport { return r.report }

// Init computes P·W and WᵀW at the starting point and evaluates it.
func (r *Penalty) Init(ctx context.Context, run *Run) error {
	r.inner, r.factor, r.mu = or(r.InnerIter, 50), or(r.Factor, 2), or(r.Coef, 1)
	memory := or(r.Memory, 10)
	if r.inner < 1 || !(r.mu > 0) || math.IsInf(r.mu, 0) || !(r.factor >= 1) || math.IsInf(r.factor, 0) || memory < 1 {
		return fmt.Errorf("penalty: want InnerIter >= 1, a finite Coef > 0, a finite Factor >= 1 and Memory >= 1")
	}
	if len(r.Proj) != 0 && len(r.Proj) != run.N*run.K {
		return fmt.Errorf("penalty: projection storage has %d values, want %d", len(r.Proj), run.N*run.K)
	}
	r.run, r.sel, r.lbfgs, r.report = run, make([]int32, run.N), &optimize.LBFGS{Store: memory}, PenaltyReport{}
	if err := run.FirstPass(ctx); err != nil {
		return err
	}
	var err error
	if r.a, err = gram(ctx, run.Workers, run.W, run.N, run.K); err != nil {
		return err
	}
	return r.evaluate(ctx)
}

// evaluate evaluates the current point, whose P·W and WᵀW are known.
func (r *Penalty) evaluate(ctx context.Context) error {
	run := r.run
	var err error
	r.cur, err = evaluate(ctx, run.Workers, run.W, run.PW, run.N, run.K, run.FrobSq, r.sel)
	return err
}

// Estimate returns the objective and the gap at the iterate; the gap is
// exact only where the iterate is feasible within 1e-9.
func (r *Penalty) Estimate() Estimate {
	rowErr, minEntry := feasibility(r.run.W, r.run.K)
	return Estimate{Objective: r.cur.f, Gap: r.cur.gap, Model: r.cur.model(), Exact: rowErr <= 1e-9 && minEntry >= -1e-9}
}

// Refresh does nothing: P·W is computed by a pass at every point.
func (r *Penalty) Refresh(context.Context) error { return nil }

// Iterate runs a round and evaluates its point.
func (r *Penalty) Iterate(ctx context.Context, it *Iteration) (Status, error) {
	r.passTime = 0
	if err := r.round(ctx); err != nil {
		return NotTerminated, err
	}
	it.Step, it.PassTime = r.mu, r.passTime
	r.report.Coef = r.mu
	r.mu *= r.factor
	return NotTerminated, r.evaluate(ctx)
}

// Finish reports the final point's distance from feasibility and evaluates
// its projection by one more pass.
func (r *Penalty) Finish(ctx context.Context, run *Run) error {
	rep := &r.report
	rep.MaxRowSumError, rep.MinEntry = feasibility(run.W, run.K)
	proj, err := storage(r.Proj, run.N*run.K, "penalty: projection")
	if err != nil {
		return err
	}
	copy(proj, run.W)
	if err := projectRowsPass(ctx, run.Workers, proj, run.N, run.K); err != nil {
		return err
	}
	pw := run.PW // the final point's P·W is no longer needed
	if err := run.Mul(ctx, pw, proj); err != nil {
		return err
	}
	pp, err := evaluate(ctx, run.Workers, proj, pw, run.N, run.K, run.FrobSq, r.sel)
	if err != nil {
		return err
	}
	rep.ProjectedObjective, rep.ProjectedGap = pp.f, pp.gap
	return nil
}

// round runs one L-BFGS minimization of the penalized objective from w and
// leaves its best point in w, with P·W and WᵀW evaluated there.
func (r *Penalty) round(ctx context.Context) error {
	run := r.run
	r.evalErr = nil
	prob := optimize.Problem{
		Func: func(x []float64) float64 {
			if err := r.at(ctx, x); err != nil {
				return math.NaN()
			}
			return r.penalized(ctx)
		},
		Grad: func(grad, x []float64) {
			if err := r.at(ctx, x); err != nil {
				clear(grad)
				return
			}
			r.gradient(ctx, grad)
		},
		Status: func() (optimize.Status, error) {
			if r.evalErr != nil {
				return optimize.Failure, r.evalErr
			}
			if err := ctx.Err(); err != nil {
				return optimize.Failure, err
			}
			return optimize.NotTerminated, nil
		},
	}
	ops := &optimize.Settings{
		MajorIterations: r.inner,
		Converger:       optimize.NeverTerminate{},
	}
	if run.MaxPasses > 0 {
		ops.FuncEvaluations = max(1, run.MaxPasses-run.Passes)
	}
	x0 := slices.Clone(run.W)
	out, err := optimize.Minimize(prob, x0, ops, r.lbfgs)
	if r.evalErr != nil {
		return r.evalErr
	}
	if err != nil {
		if !isLineSearchStop(err) || out == nil {
			return fmt.Errorf("penalty: L-BFGS: %w", err)
		}
		r.report.LineSearchStops++
	}
	r.report.InnerIterations += out.MajorIterations
	return r.at(ctx, out.X)
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
func (r *Penalty) at(ctx context.Context, x []float64) error {
	run := r.run
	if r.evalErr != nil {
		return r.evalErr
	}
	if slices.Equal(x, run.W) {
		return nil
	}
	copy(run.W, x)
	begin := time.Now()
	err := run.Mul(ctx, run.PW, run.W)
	if err == nil {
		r.passTime += time.Since(begin)
		r.a, err = gram(ctx, run.Workers, run.W, run.N, run.K)
	}
	if err != nil {
		r.evalErr = err
		// W no longer matches P·W: poison the cache.
		run.W[0] = math.NaN()
	}
	return err
}

// penalized returns F at the current point.
func (r *Penalty) penalized(ctx context.Context) float64 {
	run := r.run
	k := run.K
	type sums struct{ wpw, rows, neg float64 }
	var tot sums
	err := rowPass(ctx, run.Workers, run.N, func() *sums { return new(sums) },
		func(lo, hi int, s *sums) {
			*s = sums{}
			for i := lo; i < hi; i++ {
				wi := run.W[i*k : (i+1)*k]
				s.wpw += dot(wi, run.PW[i*k:(i+1)*k])
				var sum float64
				for _, v := range wi {
					sum += v
					if v < 0 {
						s.neg += float64(v * v)
					}
				}
				s.rows += float64((sum - 1) * (sum - 1))
			}
		},
		func(s *sums) { tot.wpw += s.wpw; tot.rows += s.rows; tot.neg += s.neg })
	if err != nil {
		r.evalErr = err
		return math.NaN()
	}
	f := float64((run.FrobSq - 2*tot.wpw + dot(r.a, r.a)) / 4)
	return f + float64(r.mu/2*(tot.rows+tot.neg))
}

// gradient sets grad = G + μ (W 1 - 1) 1ᵀ + μ min(W, 0) at the current point.
func (r *Penalty) gradient(ctx context.Context, grad []float64) {
	run := r.run
	k := run.K
	err := rowPass(ctx, run.Workers, run.N, func() struct{} { return struct{}{} },
		func(lo, hi int, _ struct{}) {
			for i := lo; i < hi; i++ {
				wi, gi := run.W[i*k:(i+1)*k], grad[i*k:(i+1)*k]
				gradRow(gi, wi, run.PW[i*k:(i+1)*k], r.a)
				var sum float64
				for _, v := range wi {
					sum += v
				}
				for j, v := range wi {
					gi[j] += float64(r.mu * (sum - 1))
					if v < 0 {
						gi[j] += float64(r.mu * v)
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
