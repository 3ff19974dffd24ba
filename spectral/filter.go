package spectral

import (
	"context"
	"math"
)

// DefaultDegree is the degree of the Chebyshev filter whose eigenvectors
// LOBPCG finds in place of A's (Options.Degree).
const DefaultDegree = 10

// filter is the operator LOBPCG iterates on: A itself until a Ritz value
// bounds the unwanted part of A's spectrum, then the Chebyshev polynomial
// B = T_d(ℓ(A)), where ℓ maps [-1, edge] onto [-1, 1]. A's spectrum lies
// in [-1, 1], so B maps the eigenvalues up to edge into [-1, 1] and those
// above it, increasing, above 1: the leading eigenvectors of B are A's as
// long as edge is below the K+1-th eigenvalue, and their gaps to the rest
// grow about d²-fold, so LOBPCG takes several times fewer iterations, each
// of d products instead of one, and the block work of an iteration (its
// inner products, orthogonalisation and Rayleigh-Ritz problem, which cost
// many times a product of a sparse graph) is done that much less often.
type filter struct {
	degree int
	on     bool
	edge   float64
}

// edgeFor returns the upper end of the damped interval for theta, the
// least Ritz value of A on the block's span, which is at most A's b-th
// eigenvalue (Cauchy's interlacing), so at most its K+1-th: theta less a
// margin, so that the eigenvalues kept stay apart from the damped ones.
func edgeFor(theta float64) float64 {
	return theta - max(0.05*(1-theta), 1e-3)
}

// better reports whether the filter of edge e damps enough more of the
// spectrum than the current one to restart with it.
func (f *filter) better(e float64) bool {
	switch {
	case f.degree < 2 || !(e > 0):
		return false
	case !f.on:
		return true
	}
	return 1-e < 0.5*(1-f.edge)
}

// applyB sets dst = B·src for the n×w blocks, using s1 and s2 as scratch
// and, with the filter on, spare (n×w, neither dst nor src): the terms of
// the recurrence alternate between dst and spare, so that the last lands
// in dst.
func (s *solver) applyB(ctx context.Context, dst, src, spare []float64, w int) error {
	f, n := &s.f, s.n
	if !f.on {
		return s.op.apply(ctx, dst, src, s.s1, w)
	}
	// ℓ(A) = αA + βI.
	alpha, beta := 2/(f.edge+1), -(f.edge-1)/(f.edge+1)
	ay := s.s2[:n*w]
	slot := func(j int) []float64 { // where T_j goes
		if (f.degree-j)%2 == 0 {
			return dst[:n*w]
		}
		return spare[:n*w]
	}
	prev, cur := src[:n*w], slot(1)
	if err := s.op.apply(ctx, ay, prev, s.s1, w); err != nil {
		return err
	}
	if err := combine(ctx, s.workers, n, cur, w, termOf(ay, w, alpha), termOf(prev, w, beta)); err != nil {
		return err
	}
	for j := 1; j < f.degree; j++ {
		if err := s.op.apply(ctx, ay, cur, s.s1, w); err != nil {
			return err
		}
		// T_{j+1} = 2ℓ(A)T_j - T_{j-1}: from T_2 on, row by row over
		// T_{j-1}, whose place it takes.
		next := slot(j + 1)
		if err := combine(ctx, s.workers, n, next, w, termOf(ay, w, 2*alpha), termOf(cur, w, 2*beta), termOf(prev, w, -1)); err != nil {
			return err
		}
		prev, cur = cur, next
	}
	return nil
}

// termOf is the term of the n×w block m times v.
func termOf(m []float64, w int, v float64) term { return term{m: m, w: w, diag: fill(w, v)} }

// fill returns w copies of v.
func fill(w int, v float64) []float64 {
	out := make([]float64, w)
	for i := range out {
		out[i] = v
	}
	return out
}

// check sets the Ritz values of A on the block's span (s.theta, whose
// least bounds the filter), and for each column x_j its Rayleigh quotient
// s.rho[j] and residual norm ||A x_j - rho_j x_j|| (s.res), by a product
// with A unless the block iterates on A itself.
func (s *solver) check(ctx context.Context) error {
	n, b := s.n, s.b
	ax := s.ax
	if s.f.on {
		ax = s.s2
		if err := s.op.apply(ctx, ax, s.x, s.s1, b); err != nil {
			return err
		}
	}
	h, err := gram(ctx, s.workers, n, s.x, b, ax, b)
	if err != nil {
		return err
	}
	if s.theta, _, err = eigenSym(h, b); err != nil {
		return err
	}
	s.rho = make([]float64, b)
	for j := range b {
		s.rho[j] = h[j*b+j]
	}
	sq, err := columnSquares(ctx, s.workers, n, b, func(i, c int) float64 { return ax[i*b+c] - s.rho[c]*s.x[i*b+c] })
	s.res = make([]float64, b)
	for c, v := range sq {
		s.res[c] = math.Sqrt(v)
	}
	return err
}
