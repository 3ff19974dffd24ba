package model

import (
	"fmt"
	"math"
)

// Simplex finds the exact minimizer over the probability simplex of
//
//	f(w) = wᵀ G w - 2 bᵀ w,
//
// G symmetric positive semidefinite (k×k, row-major; here WᵀW) and b a
// k-vector (here Wᵀ p_x), and writes it to w. It is a primal active-set
// method: it starts at the best vertex, solves the equality-constrained
// problem on the current support S (the KKT system [G_SS 1; 1ᵀ 0]) exactly
// by Gaussian elimination, steps to the boundary when that solution leaves
// the simplex, dropping the index that reached 0, and adds the index of the
// most negative reduced gradient while there is one. When adding an index
// would make the KKT system singular (W has affinely dependent columns, as
// duplicated or empty clusters give), f is linear along the null direction
// and the step goes to the boundary along it. It stops at a point that
// satisfies the KKT conditions to a tolerance of 1e-12 of the problem's
// scale, in at most a few passes over the k indices; an iteration limit
// of 50·k + 100 only guards against cycling under rounding, and reaching
// it is an error. s holds the scratch and may be reused across calls with
// the same k.
func Simplex(G, b []float64, k int, w []float64, s *SimplexScratch) error {
	if len(G) != k*k || len(b) != k || len(w) != k || k < 1 {
		return fmt.Errorf("model: simplex problem of %d, %d and %d values for k = %d", len(G), len(b), len(w), k)
	}
	s.init(k)
	scale := 0.0
	for _, v := range G {
		scale = max(scale, math.Abs(v))
	}
	for _, v := range b {
		scale = max(scale, math.Abs(v))
	}
	tol := 1e-12 * max(scale, math.SmallestNonzeroFloat64)
	// Start at the best vertex: f(e_i) = G_ii - 2 b_i.
	best := 0
	for i := 1; i < k; i++ {
		if G[i*k+i]-2*b[i] < G[best*k+best]-2*b[best] {
			best = i
		}
	}
	clear(w)
	w[best] = 1
	s.support = append(s.support[:0], best)
	for range 50*k + 100 {
		// Solve on the support; v is the solution, μ the multiplier.
		v, ok := s.solve(G, b, k, s.support, tol)
		if !ok {
			return fmt.Errorf("model: the simplex problem's KKT system is singular on a support of %d", len(s.support))
		}
		if t, drop := stepTo(w, v, s.support); drop >= 0 {
			// v leaves the simplex: go to the boundary, drop the index.
			for a, i := range s.support {
				w[i] += float64(t * (v[a] - w[i]))
			}
			s.dropZeros(w, drop)
			continue
		}
		for a, i := range s.support {
			w[i] = v[a]
		}
		// The gradient's common value on the support, and the entering
		// index: the most negative reduced gradient off it.
		g := s.grad
		for i := range k {
			var t float64
			for j, wj := range w {
				if wj != 0 {
					t += float64(G[i*k+j] * wj)
				}
			}
			g[i] = t - b[i]
		}
		var lambda float64
		for _, i := range s.support {
			lambda += g[i]
		}
		lambda /= float64(len(s.support))
		enter, most := -1, -tol
		for i := range k {
			if w[i] == 0 && !s.in(i) && g[i]-lambda < most {
				enter, most = i, g[i]-lambda
			}
		}
		if enter < 0 {
			return nil
		}
		grown := append(s.support, enter)
		if _, ok := s.solve(G, b, k, grown, tol); ok {
			s.support = grown
			continue
		}
		// The grown system is singular: f is linear along a direction d
		// with Wd = 0, Σd = 0, d_enter = 1, and decreases along it.
		if !s.degenerateStep(G, k, w, enter, tol) {
			return fmt.Errorf("model: the simplex problem is degenerate at index %d", enter)
		}
	}
	return fmt.Errorf("model: the simplex problem took more than %d active-set steps", 50*k+100)
}

// SimplexScratch is the working memory of Simplex.
type SimplexScratch struct {
	support []int
	a       []float64 // the KKT system, (s+1)×(s+2) augmented
	x       []float64 // its solution
	grad    []float64
	d       []float64
}

func (s *SimplexScratch) init(k int) {
	if cap(s.grad) < k {
		s.a = make([]float64, (k+1)*(k+2))
		s.x = make([]float64, k+1)
		s.grad = make([]float64, k)
		s.d = make([]float64, k+1)
		s.support = make([]int, 0, k+1)
	}
	s.grad = s.grad[:k]
}

func (s *SimplexScratch) in(i int) bool {
	for _, j := range s.support {
		if j == i {
			return true
		}
	}
	return false
}

// solve solves the KKT system of the support S, [G_SS 1; 1ᵀ 0][v; μ] =
// [b_S; 1], and returns v (aliasing scratch), or false if it is singular.
func (s *SimplexScratch) solve(G, b []float64, k int, S []int, tol float64) ([]float64, bool) {
	m := len(S)
	rhs := s.d[:m+1]
	for a, i := range S {
		rhs[a] = b[i]
	}
	rhs[m] = 1
	return s.kkt(G, k, S, rhs, tol)
}

// kkt solves [G_SS 1; 1ᵀ 0] x = rhs by Gaussian elimination with partial
// pivoting; false if a pivot is below tol.
func (s *SimplexScratch) kkt(G []float64, k int, S []int, rhs []float64, tol float64) ([]float64, bool) {
	m := len(S) + 1
	w := m + 1
	a := s.a[:m*w]
	for r := range m {
		for c := range m {
			switch {
			case r < m-1 && c < m-1:
				a[r*w+c] = G[S[r]*k+S[c]]
			case r == m-1 && c == m-1:
				a[r*w+c] = 0
			default:
				a[r*w+c] = 1
			}
		}
		a[r*w+m] = rhs[r]
	}
	for c := range m {
		p := c
		for r := c + 1; r < m; r++ {
			if math.Abs(a[r*w+c]) > math.Abs(a[p*w+c]) {
				p = r
			}
		}
		if math.Abs(a[p*w+c]) <= tol*float64(m) {
			return nil, false
		}
		if p != c {
			for j := range w {
				a[p*w+j], a[c*w+j] = a[c*w+j], a[p*w+j]
			}
		}
		for r := c + 1; r < m; r++ {
			f := a[r*w+c] / a[c*w+c]
			if f == 0 {
				continue
			}
			for j := c; j < w; j++ {
				a[r*w+j] -= float64(f * a[c*w+j])
			}
		}
	}
	x := s.x[:m]
	for r := m - 1; r >= 0; r-- {
		t := a[r*w+m]
		for j := r + 1; j < m; j++ {
			t -= float64(a[r*w+j] * x[j])
		}
		x[r] = t / a[r*w+r]
	}
	return x[:m-1], true
}

// stepTo returns the step t in [0, 1) from w toward v (on the support S)
// at which the first index reaches 0, and that index's position in S, or
// drop = -1 if v is in the simplex.
func stepTo(w, v []float64, S []int) (t float64, drop int) {
	t, drop = 1, -1
	for a, i := range S {
		if v[a] < 0 {
			if r := w[i] / (w[i] - v[a]); r < t || drop < 0 {
				t, drop = r, a
			}
		}
	}
	return t, drop
}

// dropZeros removes from the support the index at position drop, and any
// other that the step left at or below 0, setting them to exactly 0.
func (s *SimplexScratch) dropZeros(w []float64, drop int) {
	keep := s.support[:0]
	for a, i := range s.support {
		if a == drop || w[i] <= 0 {
			w[i] = 0
			continue
		}
		keep = append(keep, i)
	}
	s.support = keep
	normalize(w)
}

// normalize puts w back on the simplex after rounding.
func normalize(w []float64) {
	var sum float64
	for _, v := range w {
		sum += v
	}
	for i := range w {
		w[i] /= sum
	}
}

// degenerateStep moves w along the direction d that is 1 at enter and
// solves [G_SS 1; 1ᵀ 0][d_S; μ] = [-G_S,enter; -1] on the support S, on
// which f is linear, to the boundary, and swaps the index that reaches 0
// for enter. It reports false if no index of S decreases.
func (s *SimplexScratch) degenerateStep(G []float64, k int, w []float64, enter int, tol float64) bool {
	m := len(s.support)
	rhs := s.d[:m+1]
	for a, i := range s.support {
		rhs[a] = -G[i*k+enter]
	}
	rhs[m] = -1
	d, ok := s.kkt(G, k, s.support, rhs, tol)
	if !ok {
		return false
	}
	t, drop := math.Inf(1), -1
	for a, i := range s.support {
		if d[a] < 0 {
			if r := w[i] / -d[a]; r < t {
				t, drop = r, a
			}
		}
	}
	if drop < 0 {
		return false
	}
	for a, i := range s.support {
		w[i] += float64(t * d[a])
	}
	w[enter] = t
	s.support = append(s.support, enter)
	s.dropZeros(w, drop)
	return true
}
