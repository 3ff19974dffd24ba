package fw

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// This file holds what the baselines of the paper's experiments (projected
// gradient descent and the penalty method) share: checking their inputs,
// and evaluating the objective and the Frank-Wolfe gap at a point whose P·W
// has just been computed by a pass.

// checkProblem validates a problem and a starting point the way Minimize
// does, under the name of the method.
func checkProblem(method string, p Problem, w []float64) (n, k int, err error) {
	if p.P == nil {
		return 0, 0, fmt.Errorf("%s: no affinity", method)
	}
	n, k = p.P.N(), p.K
	if k < 1 {
		return 0, 0, fmt.Errorf("%s: k = %d, want k >= 1", method, k)
	}
	if len(w) != n*k {
		return 0, 0, fmt.Errorf("%s: W has %d values, want n×k = %d×%d", method, len(w), n, k)
	}
	if err := checkSimplex(w, k, 1e-9); err != nil {
		return 0, 0, fmt.Errorf("%s: initial point: %w", method, err)
	}
	return n, k, nil
}

// checkStops validates the stopping settings shared by every method.
func checkStops(method string, set *Settings) error {
	if set.MaxIter < 0 || set.GapTol < 0 || set.FuncTol < 0 || math.IsNaN(set.GapTol) || math.IsNaN(set.FuncTol) {
		return fmt.Errorf("%s: negative or NaN setting", method)
	}
	if set.Workers < 1 {
		set.Workers = 1
	}
	return nil
}

// storage returns buf if it is not nil, else a new slice of n values; it is
// an error for buf to have another length.
func storage(buf []float64, n int, what string) ([]float64, error) {
	if buf == nil {
		return make([]float64, n), nil
	}
	if len(buf) != n {
		return nil, fmt.Errorf("%s storage has %d values, want %d", what, len(buf), n)
	}
	return buf, nil
}

// point is the evaluation of a W whose P·W is known.
type point struct {
	f   float64   // f(W) = 1/4 (||P||_F^2 - 2 <W, PW> + ||WᵀW||_F^2)
	gap float64   // <G, W> - sum_i min_j G_ij, the Frank-Wolfe gap if W is feasible
	a   []float64 // WᵀW
}

// evaluate computes the objective and the Frank-Wolfe gap at w from pw = P·W
// and frob = ||P||_F^2; sel receives the LMO's vertex. The identities hold
// for any W, feasible or not, but the gap certifies a KKT point only for a
// feasible W.
func evaluate(ctx context.Context, workers int, w, pw []float64, n, k int, frob float64, sel []int32) (point, error) {
	a, err := gram(ctx, workers, w, n, k)
	if err != nil {
		return point{}, err
	}
	total := newLMOSums(k)
	err = rowPass(ctx, workers, n,
		func() *lmoSums { return newLMOSums(k) },
		func(lo, hi int, acc *lmoSums) {
			acc.reset()
			lmoRows(lo, hi, k, w, pw, a, sel, acc)
		},
		total.add)
	if err != nil {
		return point{}, err
	}
	return point{f: (frob - 2*total.wpw + dot(a, a)) / 4, gap: total.gw - total.gmin, a: a}, nil
}

// maxRowSum returns the largest row sum of the k×k matrix a, an upper bound
// on its largest eigenvalue when a is nonnegative.
func maxRowSum(a []float64, k int) float64 {
	var m float64
	for r := range k {
		var s float64
		for _, v := range a[r*k : (r+1)*k] {
			s += math.Abs(v)
		}
		m = max(m, s)
	}
	return m
}

// stopStatus applies the stopping rules of Minimize to the iterate t with
// objective f and gap, fprev being the objective of the iterate before.
func stopStatus(set *Settings, t int, f, fprev, gap float64) Status {
	switch {
	case gap <= set.GapTol:
		return GapTolerance
	case t > 0 && math.Abs(f-fprev) < set.FuncTol:
		return FunctionConvergence
	case t >= set.MaxIter:
		return IterationLimit
	}
	return NotTerminated
}

// errNonFinite reports an objective that is no longer a finite number.
var errNonFinite = errors.New("the objective is not finite")
