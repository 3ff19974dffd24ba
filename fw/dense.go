package fw

import (
	"context"
	"fmt"
	"math"
)

// Dense is an Affinity held in memory as a full n×n matrix. It suits small
// problems and serves as the reference the streaming passes are tested
// against.
type Dense struct {
	n int
	p []float64
}

// NewDense returns the Affinity of the n×n row-major matrix p, which must be
// symmetric, finite and nonnegative. It does not copy p.
func NewDense(n int, p []float64) (*Dense, error) {
	if n < 1 || len(p) != n*n {
		return nil, fmt.Errorf("fw: dense affinity has %d values, want n×n with n = %d", len(p), n)
	}
	for i := range n {
		for j := i; j < n; j++ {
			v := p[i*n+j]
			if !(v >= 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("fw: dense affinity P[%d][%d] = %v, want finite and >= 0", i, j, v)
			}
			if v != p[j*n+i] {
				return nil, fmt.Errorf("fw: dense affinity is not symmetric at [%d][%d]", i, j)
			}
		}
	}
	return &Dense{n: n, p: p}, nil
}

// N returns the order of P.
func (d *Dense) N() int { return d.n }

// Mul sets dst = P·W and, if rowSums is not nil, the row sums of P, returning
// ||P||_F^2. ||P||_F^2 is summed row by row, each row's sum added in row
// order, and the products are rounded before they are added (see axpy), as
// graph.CSR's are: for n up to its chunk of 4096 rows a CSR of the same
// entries gives the same bits, on every architecture.
func (d *Dense) Mul(_ context.Context, dst, w []float64, k int, rowSums []float64) (float64, error) {
	n := d.n
	if len(dst) != n*k || len(w) != n*k || (rowSums != nil && len(rowSums) != n) {
		return 0, fmt.Errorf("fw: dense P·W: sizes do not match n = %d, k = %d", n, k)
	}
	clear(dst)
	var frob float64
	for i := range n {
		yi := dst[i*k : (i+1)*k]
		var rs, sq float64
		for j, v := range d.p[i*n : (i+1)*n] {
			axpy(yi, v, w[j*k:(j+1)*k])
			rs += v
			sq += float64(v * v) // rounded, as graph.CSR's
		}
		if rowSums != nil {
			rowSums[i] = rs
		}
		frob += sq
	}
	if rowSums == nil {
		frob = 0
	}
	return frob, nil
}

// MulOneHot sets dst = P·S for the one-hot S with S[i][s[i]] = 1.
func (d *Dense) MulOneHot(_ context.Context, dst []float64, s []int32, k int) error {
	n := d.n
	if len(dst) != n*k || len(s) != n {
		return fmt.Errorf("fw: dense P·S: sizes do not match n = %d, k = %d", n, k)
	}
	clear(dst)
	for i := range n {
		for j, v := range d.p[i*n : (i+1)*n] {
			c := int(s[j])
			if c < 0 || c >= k {
				return fmt.Errorf("fw: dense P·S: row %d has column %d, want 0 <= c < %d", j, c, k)
			}
			dst[i*k+c] += v
		}
	}
	return nil
}

// Tile writes P[r0:r1, c0:c1] into dst, row-major with stride c1-c0, so that
// a Dense is also a TileSource.
func (d *Dense) Tile(dst []float64, r0, r1, c0, c1 int) error {
	n := d.n
	if r0 < 0 || r0 > r1 || r1 > n || c0 < 0 || c0 > c1 || c1 > n {
		return fmt.Errorf("fw: dense tile rows %d:%d cols %d:%d out of range for n = %d", r0, r1, c0, c1, n)
	}
	w := c1 - c0
	if len(dst) < (r1-r0)*w {
		return fmt.Errorf("fw: dense tile rows %d:%d cols %d:%d: %d values of room, want %d", r0, r1, c0, c1, len(dst), (r1-r0)*w)
	}
	for i := r0; i < r1; i++ {
		copy(dst[(i-r0)*w:(i-r0+1)*w], d.p[i*n+c0:i*n+c1])
	}
	return nil
}

// Sweep returns the sweep over strips of P's tiles (see Sweep).
func (d *Dense) Sweep(k int, opt SweepOptions) (Sweep, error) { return newStrips(d, k, opt) }
