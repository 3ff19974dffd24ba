package fw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// PolytopeProblem is the minimization of a function f over a compact convex
// set D given by its linear minimization oracle, the general setting of
// Frank-Wolfe (Section 4 of the paper). D is typically a polytope, for which
// Vertices gives an oracle.
type PolytopeProblem struct {
	// Func returns f(x) and writes a gradient of f at x into grad (a
	// subgradient where f is not differentiable). It must not keep x or
	// grad.
	Func func(x, grad []float64) float64
	// LMO writes into s a minimizer of <g, s> over D.
	LMO func(g, s []float64)
}

// PolytopeSettings control MinimizePolytope.
type PolytopeSettings struct {
	// Step is the step rule: StepOpenLoop (2/(t+2)), StepCurvature
	// (min(g/C, 1) with C = Curvature) or StepExact (a golden-section search
	// for the minimum of f along the step, exact for functions convex along
	// the segment, which is compared with the end points).
	Step      StepRule
	Curvature float64 // C of StepCurvature, > 0
	GapTol    float64 // stop when the gap <g, x - s> is <= GapTol
	MaxIter   int     // stop after MaxIter iterations
	Recorder  func(Iteration) error
}

// DefaultPolytopeSettings returns the open-loop step, a gap tolerance of
// 1e-9 and at most 1000 iterations.
func DefaultPolytopeSettings() PolytopeSettings {
	return PolytopeSettings{Step: StepOpenLoop, GapTol: 1e-9, MaxIter: 1000}
}

// Vertices is a polytope given by its vertices, all of the same dimension.
type Vertices [][]float64

// LMO writes into s the vertex v that minimizes <g, v>, the first one on
// ties.
func (vs Vertices) LMO(g, s []float64) {
	best, fbest := 0, math.Inf(1)
	for i, v := range vs {
		if f := dot(g, v); f < fbest {
			best, fbest = i, f
		}
	}
	copy(s, vs[best])
}

// MinimizePolytope runs Frank-Wolfe on p from the feasible point x, which it
// overwrites with the last iterate: x ← x + γ (s - x) with s = LMO(∇f(x)),
// stopping when the Frank-Wolfe gap <∇f(x), x - s> is at most GapTol or
// after MaxIter iterations. The Result has no passes and no ||P||_F^2; its
// Objective and Gap are those of the last iterate. For a convex f with a
// finite curvature constant the gap bounds f(x) - min f; for a nonsmooth f
// the method may stop far from the minimum (see the package's polytope
// example).
func MinimizePolytope(ctx context.Context, p PolytopeProblem, x []float64, settings *PolytopeSettings) (*Result, error) {
	if p.Func == nil || p.LMO == nil {
		return nil, errors.New("fw: polytope problem without Func or LMO")
	}
	if len(x) == 0 {
		return nil, errors.New("fw: polytope problem of dimension 0")
	}
	set := DefaultPolytopeSettings()
	if settings != nil {
		set = *settings
	}
	switch {
	case set.MaxIter < 0 || !(set.GapTol >= 0):
		return nil, errors.New("fw: polytope: negative or NaN setting")
	case set.Step == StepCurvature && !(set.Curvature > 0 && !math.IsInf(set.Curvature, 0)):
		return nil, fmt.Errorf("fw: polytope: the curvature step needs a finite Curvature > 0, have %v", set.Curvature)
	case set.Step != StepOpenLoop && set.Step != StepCurvature && set.Step != StepExact:
		return nil, fmt.Errorf("fw: polytope: unknown step rule %v", set.Step)
	}
	start := time.Now()
	dim := len(x)
	g, s, d, y, scratch := make([]float64, dim), make([]float64, dim), make([]float64, dim), make([]float64, dim), make([]float64, dim)
	res := &Result{}
	for t := 0; ; t++ {
		if err := ctx.Err(); err != nil {
			res.Runtime = time.Since(start)
			return res, err
		}
		f := p.Func(x, g)
		p.LMO(g, s)
		for i := range d {
			d[i] = s[i] - x[i]
		}
		gap := -dot(g, d)
		if math.IsNaN(f) || math.IsNaN(gap) {
			res.Runtime = time.Since(start)
			return res, fmt.Errorf("fw: polytope: iteration %d: f = %v, gap = %v", t, f, gap)
		}
		res.Objective, res.Gap = f, gap
		switch {
		case gap <= set.GapTol:
			res.Status = GapTolerance
		case t >= set.MaxIter:
			res.Status = IterationLimit
		}
		it := Iteration{Iter: t, Objective: f, Gap: gap, Final: res.Status != NotTerminated, Elapsed: time.Since(start)}
		if !it.Final {
			switch set.Step {
			case StepOpenLoop:
				it.Step = 2 / float64(t+2)
			case StepCurvature:
				it.Step = math.Min(gap/set.Curvature, 1)
			case StepExact:
				it.Step = segmentArgmin(func(lam float64) float64 {
					for i := range y {
						y[i] = x[i] + float64(lam*d[i])
					}
					return p.Func(y, scratch)
				})
			}
		}
		if set.Recorder != nil {
			if err := set.Recorder(it); err != nil {
				res.Runtime = time.Since(start)
				return res, err
			}
		}
		if it.Final {
			break
		}
		for i := range x {
			x[i] += float64(it.Step * d[i])
		}
		res.Iterations = t + 1
	}
	res.Runtime = time.Since(start)
	return res, nil
}

// segmentArgmin returns the λ in [0, 1] with the smallest phi(λ) among the
// end points and the result of a golden-section search, which finds the
// minimum of a function unimodal on [0, 1].
func segmentArgmin(phi func(float64) float64) float64 {
	invPhi := (math.Sqrt(5) - 1) / 2
	lo, hi := 0.0, 1.0
	a, b := hi-float64(invPhi*(hi-lo)), lo+float64(invPhi*(hi-lo))
	fa, fb := phi(a), phi(b)
	for hi-lo > 1e-12 {
		if fa <= fb {
			hi, b, fb = b, a, fa
			a = hi - float64(invPhi*(hi-lo))
			fa = phi(a)
		} else {
			lo, a, fa = a, b, fb
			b = lo + float64(invPhi*(hi-lo))
			fb = phi(b)
		}
	}
	best, fbest := 0.0, phi(0)
	for _, c := range []float64{(lo + hi) / 2, 1} {
		if fc := phi(c); fc < fbest {
			best, fbest = c, fc
		}
	}
	return best
}
