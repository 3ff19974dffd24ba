package fw

import "math"

// quartic is q(λ) = a1 λ + a2 λ^2 + a3 λ^3 + a4 λ^4, the change of the
// objective along a Frank-Wolfe step: f(W + λD) = f(W) + q(λ).
type quartic struct{ a1, a2, a3, a4 float64 }

func (q quartic) at(x float64) float64 {
	return x * (q.a1 + x*(q.a2+x*(q.a3+x*q.a4)))
}

func (q quartic) deriv(x float64) float64 {
	return q.a1 + x*(2*q.a2+x*(3*q.a3+x*4*q.a4))
}

// argmin returns the λ in [0, 1] that minimizes q, the smallest one on ties.
// The candidates are the end points and the roots of q' in (0, 1); q' is a
// cubic, monotone between the roots of the second derivative, so each of its
// roots is found by bisection on an interval where it changes sign.
func (q quartic) argmin() float64 {
	cuts := []float64{0}
	for _, r := range quadRoots(6*q.a4, 3*q.a3, q.a2) { // half the second derivative
		if r > 0 && r < 1 {
			cuts = append(cuts, r)
		}
	}
	cuts = append(cuts, 1)
	if len(cuts) == 4 && cuts[1] > cuts[2] {
		cuts[1], cuts[2] = cuts[2], cuts[1]
	}
	best, fbest := 0.0, 0.0
	try := func(x float64) {
		if fx := q.at(x); fx < fbest {
			best, fbest = x, fx
		}
	}
	for i := 0; i+1 < len(cuts); i++ {
		lo, hi := cuts[i], cuts[i+1]
		dlo, dhi := q.deriv(lo), q.deriv(hi)
		if dlo < 0 && dhi > 0 || dlo > 0 && dhi < 0 {
			try(bisect(q.deriv, lo, hi, dlo))
		}
	}
	try(1)
	return best
}

// bisect returns a root of f in [lo, hi], where f(lo) = flo and f changes
// sign, to the resolution of float64.
func bisect(f func(float64) float64, lo, hi, flo float64) float64 {
	for {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			return mid
		}
		fm := f(mid)
		if fm == 0 {
			return mid
		}
		if (fm < 0) == (flo < 0) {
			lo, flo = mid, fm
		} else {
			hi = mid
		}
	}
}

// quadRoots returns the real roots of a x^2 + b x + c, computed without
// cancellation; a linear equation if a == 0.
func quadRoots(a, b, c float64) []float64 {
	if a == 0 {
		if b == 0 {
			return nil
		}
		return []float64{-c / b}
	}
	disc := b*b - 4*a*c
	if disc < 0 {
		return nil
	}
	t := -(b + math.Copysign(math.Sqrt(disc), b)) / 2
	if t == 0 {
		return []float64{0}
	}
	return []float64{t / a, c / t}
}
