package fw

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// ProjectSimplex replaces v by its Euclidean projection onto the probability
// simplex {x : x >= 0, sum x = 1}, the point of the simplex nearest to v. It
// sorts a copy of v, O(k log k) for k = len(v). An empty v is left as it is;
// so is a v with a NaN or an infinite entry, for which the projection is not
// defined.
func ProjectSimplex(v []float64) {
	projectSimplex(v, make([]float64, len(v)))
}

// ProjectRows projects every row of the row-major matrix w (k columns) onto
// the probability simplex, as ProjectSimplex does. It returns an error if
// len(w) is not a multiple of k or if a row holds a NaN or an infinity.
func ProjectRows(w []float64, k int) error {
	if k < 1 || len(w)%k != 0 {
		return fmt.Errorf("fw: cannot project %d values in rows of k = %d", len(w), k)
	}
	buf := make([]float64, k)
	for i := 0; i < len(w); i += k {
		row := w[i : i+k]
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("fw: row %d, column %d is %v, cannot project", i/k, j, v)
			}
		}
		projectSimplex(row, buf)
	}
	return nil
}

// projectSimplex projects v onto the simplex using buf (len(buf) >= len(v))
// as scratch. With u the entries of v sorted in decreasing order, the
// projection is max(v - τ, 0), where τ = (u_1 + ... + u_ρ - 1)/ρ and ρ is the
// largest j with u_j > (u_1 + ... + u_j - 1)/j.
func projectSimplex(v, buf []float64) {
	k := len(v)
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
	}
	if k == 0 {
		return
	}
	u := buf[:k]
	copy(u, v)
	slices.Sort(u)
	var sum, tau float64
	for j := range k {
		x := u[k-1-j] // the (j+1)-th largest
		sum += x
		if t := (sum - 1) / float64(j+1); x > t {
			tau = t
		} else if j > 0 {
			// The condition holds for a prefix of j and fails for all
			// later ones; keep the last τ that held.
			break
		}
	}
	for j, x := range v {
		v[j] = max(x-tau, 0)
	}
}

// projectRowsPass projects the rows of w (n×k) onto the simplex in parallel.
func projectRowsPass(ctx context.Context, workers int, w []float64, n, k int) error {
	return rowPass(ctx, workers, n, func() []float64 { return make([]float64, k) },
		func(lo, hi int, buf []float64) {
			for i := lo; i < hi; i++ {
				projectSimplex(w[i*k:(i+1)*k], buf)
			}
		}, func([]float64) {})
}
