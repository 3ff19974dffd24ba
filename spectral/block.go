package spectral

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/ssnmf/ssnmf/internal/ordered"
)

// chunkRows is the number of rows of a task in a pass over the block
// vectors: fixed, so that the block inner products are added chunk by
// chunk in the same order for any number of workers.
const chunkRows = 4096

// chunks returns the number of tasks of a pass over n rows.
func chunks(n int) int { return (n + chunkRows - 1) / chunkRows }

// gram returns AᵀB, wa×wb, for the n×wa matrix a and the n×wb matrix b
// (row-major): the partial sums of each chunk of rows, added in chunk
// order.
func gram(ctx context.Context, workers, n int, a []float64, wa int, b []float64, wb int) ([]float64, error) {
	out := make([]float64, wa*wb)
	if wa == 0 || wb == 0 {
		return out, nil
	}
	err := ordered.Run(ctx, workers, chunks(n),
		func() []float64 { return make([]float64, wa*wb) },
		func(_ context.Context, t int, part []float64) error {
			clear(part)
			i, end := t*chunkRows, min(n, (t+1)*chunkRows)
			// Two rows at a time, each sum still added row by row.
			for ; i+1 < end; i += 2 {
				ai, bi := a[i*wa:(i+1)*wa], b[i*wb:(i+1)*wb]
				aj, bj := a[(i+1)*wa:(i+2)*wa], b[(i+1)*wb:(i+2)*wb]
				for r, x := range ai {
					row, x2 := part[r*wb:(r+1)*wb], aj[r]
					for c, y := range bi {
						row[c] = row[c] + float64(x*y) + float64(x2*bj[c])
					}
				}
			}
			for ; i < end; i++ {
				ai, bi := a[i*wa:(i+1)*wa], b[i*wb:(i+1)*wb]
				for r, x := range ai {
					row := part[r*wb : (r+1)*wb]
					for c, y := range bi {
						row[c] += float64(x * y)
					}
				}
			}
			return nil
		},
		func(_ int, part []float64) error {
			for i, v := range part {
				out[i] += v
			}
			return nil
		})
	return out, err
}

// term is a product M·C of an n×w block M and a w×wd coefficient matrix
// C, a term of combine. Without C, the term is M itself (w = wd), or with
// diag the diagonal C = diag(diag), or with cols the columns cols of M.
type term struct {
	m    []float64
	w    int
	c    []float64
	diag []float64
	cols []int
}

// add adds row i of the term to row.
func (tm *term) add(row []float64, i int) {
	mi := tm.m[i*tm.w : (i+1)*tm.w]
	switch {
	case tm.c != nil:
		wd, r := len(row), 0
		// Two rows of C at a time, each sum still added in the order of r.
		for ; r+1 < len(mi); r += 2 {
			x, x2, c2 := mi[r], mi[r+1], tm.c[(r+1)*wd:(r+2)*wd]
			for c, y := range tm.c[r*wd : (r+1)*wd] {
				row[c] = row[c] + float64(x*y) + float64(x2*c2[c])
			}
		}
		for ; r < len(mi); r++ {
			x := mi[r]
			for c, y := range tm.c[r*wd : (r+1)*wd] {
				row[c] += float64(x * y)
			}
		}
	case tm.diag != nil:
		for c, x := range mi {
			row[c] += float64(x * tm.diag[c])
		}
	case tm.cols != nil:
		for c, j := range tm.cols {
			row[c] += mi[j]
		}
	default:
		for c, x := range mi {
			row[c] += x
		}
	}
}

// combine sets dst (n×wd) to the sum of the terms' products, row by row:
// a row of dst depends only on the same row of the terms, so dst may be
// one of the terms' blocks (it is updated in place).
func combine(ctx context.Context, workers, n int, dst []float64, wd int, terms ...term) error {
	return ordered.Run(ctx, workers, chunks(n),
		func() []float64 { return make([]float64, wd) },
		func(_ context.Context, t int, row []float64) error {
			for i := t * chunkRows; i < min(n, (t+1)*chunkRows); i++ {
				clear(row)
				for q := range terms {
					terms[q].add(row, i)
				}
				copy(dst[i*wd:(i+1)*wd], row)
			}
			return nil
		},
		func(int, []float64) error { return nil })
}

// eigenSym returns the eigenvalues of the symmetric m×m matrix h (its
// upper and lower triangles averaged), ascending, and the m×m row-major
// matrix whose columns are the eigenvectors.
func eigenSym(h []float64, m int) ([]float64, []float64, error) {
	sym := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			sym.SetSym(i, j, (h[i*m+j]+h[j*m+i])/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(sym, true) {
		return nil, nil, fmt.Errorf("spectral: the %d×%d Rayleigh-Ritz problem did not converge", m, m)
	}
	var v mat.Dense
	es.VectorsTo(&v)
	return es.Values(nil), v.RawMatrix().Data, nil
}

// dropTol is the smallest eigenvalue of a basis' Gram matrix, relative to
// its largest, whose direction orthonormalize keeps: directions below it
// are numerically dependent on the others and are dropped.
const dropTol = 1e-12

// orthonormalize returns the w×w' coefficients T such that Q = M·T has
// orthonormal columns spanning M's numerical range, for the n×w block M
// whose Gram matrix is g = MᵀM (SVQB, Stathopoulos and Wu 2002: the
// eigenvectors of the Gram matrix scaled to unit diagonal, divided by the
// square roots of their eigenvalues; the directions whose eigenvalue is
// below dropTol of the largest are dropped). w' is len(T)/w; 0 if M is 0.
func orthonormalize(g []float64, w int) ([]float64, int, error) {
	scale := make([]float64, w)
	for i := range w {
		if d := g[i*w+i]; d > 0 {
			scale[i] = 1 / math.Sqrt(d)
		}
	}
	h := make([]float64, w*w)
	for i := range w {
		for j := range w {
			h[i*w+j] = scale[i] * g[i*w+j] * scale[j]
		}
	}
	vals, vecs, err := eigenSym(h, w)
	if err != nil {
		return nil, 0, err
	}
	top := vals[w-1]
	var keep []int
	for j := w - 1; j >= 0; j-- {
		if top > 0 && vals[j] > dropTol*top {
			keep = append(keep, j)
		}
	}
	wk := len(keep)
	t := make([]float64, w*wk)
	for i := range w {
		for c, j := range keep {
			t[i*wk+c] = scale[i] * vecs[i*w+j] / math.Sqrt(vals[j])
		}
	}
	return t, wk, nil
}

// transpose returns the transpose of the r×c row-major matrix a.
func transpose(a []float64, r, c int) []float64 {
	t := make([]float64, len(a))
	for i := range r {
		for j := range c {
			t[j*r+i] = a[i*c+j]
		}
	}
	return t
}

// negate returns -a.
func negate(a []float64) []float64 {
	out := make([]float64, len(a))
	for i, v := range a {
		out[i] = -v
	}
	return out
}
