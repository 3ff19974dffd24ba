package fw

import (
	"context"
	"math"
)

// This file evaluates the objective and the Frank-Wolfe gap at a point
// whose P·W has just been computed by a pass.

// point is the evaluation of a W whose P·W is known.
type point struct {
	f   float64   // f(W) = 1/4 (||P||_F^2 - 2 <W, PW> + ||WᵀW||_F^2)
	gap float64   // <G, W> - sum_i min_j G_ij, the Frank-Wolfe gap if W is feasible
	a   []float64 // WᵀW
}

// model returns ¼||WᵀW||_F², Estimate.Model.
func (p point) model() float64 { return dot(p.a, p.a) / 4 }

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
