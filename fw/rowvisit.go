package fw

import "math"

// This file holds the row visit of RowCD: with every other row of W fixed,
// the objective is a quartic function of one row, and a visit takes exact
// pairwise moves within the row's simplex.

// rankUpdate sets a (k×k) to a + w'w'ᵀ - wwᵀ for w' = w + d, where d has
// the values vals in the columns cols: a += d wᵀ + w dᵀ + d dᵀ.
func rankUpdate(a []float64, k int, w []float64, cols []int32, vals []float64) {
	for e, c := range cols {
		d := vals[e]
		axpy(a[int(c)*k:(int(c)+1)*k], d, w)
		for j, x := range w {
			a[j*k+int(c)] += float64(d * x)
		}
	}
	for e, c := range cols {
		for f, c2 := range cols {
			a[int(c)*k+int(c2)] += float64(vals[e] * vals[f])
		}
	}
}

// visitScratch is the memory of a row visit.
type visitScratch struct {
	old []float64 // the row at the start of the visit
	y   []float64 // A₋ v, A₋ = WᵀW - w wᵀ
	g   []float64 // the row objective's gradient at v
	// cols and vals are the row's change, nz slots, where no Pending
	// keeps it.
	cols []int32
	vals []float64
}

func newVisitScratch(k, nz int) *visitScratch {
	return &visitScratch{old: make([]float64, k), y: make([]float64, k), g: make([]float64, k), cols: make([]int32, nz), vals: make([]float64, nz)}
}

// visitResult is the outcome of a row visit.
type visitResult struct {
	dec   float64 // change of the objective (<= 0)
	gap   float64 // the row gap g·w - min_j g_j at the start of the visit
	moved float64 // mass moved
	moves int     // moves taken
}

// visitRow takes up to moves pairwise moves on the row v (overwritten; its
// value at the start is kept in vs.old) of W, where pwi is the row of P·W,
// a = WᵀW (with the row at its old value, and not changed here) and pii = P_ii.
//
// With w the row at the start and the other rows fixed, the objective as a
// function of the row is h(v) = 1/2 Σ_{l≠i} (P_il - v·w_l)^2 + 1/4 (P_ii -
// |v|^2)^2, whose gradient is g(v) = A₋ v - (PW_i - P_ii w) - (P_ii - |v|^2) v
// with A₋ = A - w wᵀ; g(w) is row i of the gradient of f.
func visitRow(v, pwi, a []float64, pii float64, moves int, vs *visitScratch) visitResult {
	k := len(v)
	w, y, g := vs.old, vs.y, vs.g
	copy(w, v)
	ww := dot(w, w)
	for j := range y {
		y[j] = -ww * w[j]
	}
	for c, x := range w {
		if x != 0 {
			axpy(y, x, a[c*k:(c+1)*k])
		}
	}
	vv := ww
	grad := func() {
		s := pii - vv
		for j := range g {
			g[j] = y[j] - (pwi[j] - float64(pii*w[j])) - float64(s*v[j])
		}
	}
	grad()
	var res visitResult
	lo := 0
	for j, x := range g {
		if x < g[lo] {
			lo = j
		}
	}
	res.gap = dot(g, v) - g[lo]
	for range moves {
		fa, fb := pairOf(v, g)
		if fb < 0 || !(g[fb] > g[fa]) {
			break
		}
		q := rowQuartic(a, w, v, g, pii, fa, fb)
		top := v[fb]
		s := q.scaled(top).argmin()
		if s == 0 {
			break
		}
		t := float64(top * s)
		res.dec += float64(q.scaled(top).at(s))
		res.moved += t
		res.moves++
		for j := range y {
			y[j] += float64(t * ((a[j*k+fa] - float64(w[j]*w[fa])) - (a[j*k+fb] - float64(w[j]*w[fb]))))
		}
		v[fa] += t
		if s == 1 {
			v[fb] = 0
		} else {
			v[fb] -= t
		}
		vv = dot(v, v)
		grad()
	}
	return res
}

// pairOf returns the Frank-Wolfe vertex a = argmin_j g_j and the away
// vertex b = argmax{g_j : v_j > 0}; b = -1 if v has no positive entry.
// Values within tieTol·max_j |g_j| of the extreme count as ties, which go to
// the lowest index. Ties are the rule, not the exception: after an interior
// exact move from b to a, g_a = g_b in exact arithmetic, and the choice
// between them must not depend on the rounding of the carried sums.
func pairOf(v, g []float64) (a, b int) {
	var scale float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for j, x := range g {
		scale = max(scale, math.Abs(x))
		lo = min(lo, x)
		if v[j] > 0 {
			hi = max(hi, x)
		}
	}
	tol := float64(tieTol * scale)
	a, b = -1, -1
	for j, x := range g {
		if a < 0 && x <= lo+tol {
			a = j
		}
		if b < 0 && v[j] > 0 && x >= hi-tol {
			b = j
		}
	}
	return a, b
}

// tieTol is the relative width of a tie in pairOf.
const tieTol = 1e-12

// rowQuartic returns the coefficients of h(v + t(e_a - e_b)) - h(v) for
// a != b (see visitRow for h, a = WᵀW with the row at w, g = g(v)):
//
//	c1 = g_a - g_b
//	c2 = 1/2 (A₋aa + A₋bb - 2 A₋ab) + 1/4 (r1^2 - 4 r0)
//	c3 = -r1
//	c4 = 1
//
// with r0 = P_ii - |v|^2 and r1 = -2 (v_a - v_b).
func rowQuartic(a, w, v, g []float64, pii float64, fa, fb int) quartic {
	k := len(w)
	am := func(r, c int) float64 { return a[r*k+c] - float64(w[r]*w[c]) }
	r0 := pii - dot(v, v)
	r1 := -2 * (v[fa] - v[fb])
	return quartic{
		a1: g[fa] - g[fb],
		a2: float64((am(fa, fa)+am(fb, fb)-float64(2*am(fa, fb)))/2) + float64((float64(r1*r1)-float64(4*r0))/4),
		a3: -r1,
		a4: 1,
	}
}

// scaled returns the quartic in s = t/T: q(T s).
func (q quartic) scaled(T float64) quartic {
	T2 := T * T
	return quartic{a1: float64(q.a1 * T), a2: float64(q.a2 * T2), a3: float64(q.a3 * T2 * T), a4: float64(q.a4 * T2 * T2)}
}
