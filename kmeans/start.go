package kmeans

import (
	"fmt"
	"math"

	"github.com/ssnmf/ssnmf/internal/negexp"
)

// OneHot writes the hard memberships of the clustering into w, an n×k
// row-major matrix: w[i][Labels[i]] = 1 and every other entry 0.
//
// It is feasible for the Frank-Wolfe solver but a poor start: with k = 2
// every row's Frank-Wolfe vertex is the other cluster, the exact line search
// stops at λ = 1/2, and every row becomes (1/2, 1/2), a stationary point
// with every row tied (docs/bandwidth.md). Start from Soft instead.
func (r *Result) OneHot(w []float64) error {
	n, k := len(r.Labels), r.K
	if len(w) != n*k {
		return fmt.Errorf("kmeans: membership matrix has %d values, want n*k = %d*%d", len(w), n, k)
	}
	clear(w)
	for i, c := range r.Labels {
		w[i*k+int(c)] = 1
	}
	return nil
}

// Soft writes soft memberships into w (n×k, row-major):
// w_ij ∝ exp(-beta ||x_i - c_j||²), each row normalized to sum 1, where x is
// the n×p feature matrix the clustering was computed from and c_j its
// centers. beta = 0 gives uniform rows; as beta grows the rows tend to the
// one-hot memberships of the nearest center. Empty clusters get weight 0.
//
// With beta = gamma, the bandwidth of the Gaussian kernel being factored,
// this is ssnmf's k-means start. Early in a run it is ahead of a uniform
// random start (on pendigits the random start needs about 30 Frank-Wolfe
// iterations to reach the objective this start has at 10); by a few hundred
// iterations the two end close (docs/bandwidth.md).
func (r *Result) Soft(w, x []float64, beta float64) error {
	n, k, p := len(r.Labels), r.K, r.P
	switch {
	case len(w) != n*k:
		return fmt.Errorf("kmeans: membership matrix has %d values, want n*k = %d*%d", len(w), n, k)
	case len(x) != n*p:
		return fmt.Errorf("kmeans: features have %d values, want n*p = %d*%d", len(x), n, p)
	case !(beta >= 0) || math.IsInf(beta, 0):
		return fmt.Errorf("kmeans: soft membership needs a finite beta >= 0, have %v", beta)
	}
	for i := range n {
		row := w[i*k : (i+1)*k]
		xi := x[i*p : (i+1)*p]
		dmin := math.Inf(1)
		for c := range k {
			if r.Sizes[c] > 0 {
				row[c] = sqDist(xi, r.Centers[c*p:(c+1)*p])
				dmin = min(dmin, row[c])
			}
		}
		// Shifting by the nearest center's distance keeps the largest
		// weight at exp(0) = 1: no underflow of the whole row.
		var sum float64
		for c, d := range row {
			row[c] = 0
			if r.Sizes[c] > 0 {
				row[c] = negexp.Of(beta * (d - dmin))
			}
			sum += row[c]
		}
		for c := range row {
			row[c] /= sum
		}
	}
	return nil
}
