package fw

import "math"

// quartic is q(λ) = a1 λ + a2 λ^2 + a3 λ^3 + a4 λ^4, the change of the
// objective along a Frank-Wolfe step: f(W + λD) = f(W) + q(λ).
type quartic struct{ a1, a2, a3, a4 float64 }

func (q quartic) at(x float64) float64 {
	return x * (q.a1 + float64(x*(q.a2+float64(x*(q.a3+float64(x*q.a4))))))
}

func (q quartic) deriv(x float64) float64 {
	return q.a1 + float64(x*(float64(2*q.a2)+float64(x*(float64(3*q.a3)+float64(x*4*q.a4)))))
}

func (q quartic) deriv2(x float64) float64 {
	return float64(2*q.a2) + float64(x*(float64(6*q.a3)+float64(x*12*q.a4)))
}

// argmin returns the λ in [0, 1] that minimizes q, the smallest one on ties.
// The candidates are the end points and the roots of q' in (0, 1); q' is a
// cubic, monotone between the roots of the second derivative, so each of its
// roots is found by quartic.root on an interval where it changes sign.
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
			try(q.root(lo, hi, dlo))
		}
	}
	try(1)
	return best
}

// root returns the root of q' in [lo, hi], where q'(lo) = dlo, q' changes
// sign and is monotone, to the resolution of float64: Newton steps from
// the middle, kept inside a bracket that every step shrinks, and bisection
// where a Newton step would leave it.
func (q quartic) root(lo, hi, dlo float64) float64 {
	x := lo + float64((hi-lo)/2)
	for range 256 {
		d := q.deriv(x)
		if d == 0 {
			return x
		}
		if (d < 0) == (dlo < 0) {
			lo = x
		} else {
			hi = x
		}
		nx := x - d/q.deriv2(x)
		if !(nx > lo && nx < hi) {
			nx = lo + float64((hi-lo)/2)
			if nx <= lo || nx >= hi {
				return x
			}
		}
		if nx == x {
			return x
		}
		x = nx
	}
	return x
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
	disc := float64(b*b) - float64(4*a*c)
	if disc < 0 {
		return nil
	}
	t := -(b + math.Copysign(math.Sqrt(disc), b)) / 2
	if t == 0 {
		return []float64{0}
	}
	return []float64{t / a, c / t}
}
