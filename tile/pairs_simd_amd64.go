//go:build goexperiment.simd && amd64

package tile

import (
	"math"
	"math/bits"
	"simd/archsimd"
)

// pairsVector is the vectorized screen of Pairs. A tile of approximate
// squared distances t_ij = |a_i|² + |a_j|² - 2 a_i·a_j comes from the
// generation micro-kernels (tg = -2, no exponential) on the centred
// features a rounded to float32. A pair is recomputed exactly when
//
//	t_ij <= threshold + c·(|a_i|² + |a_j|²) + tiny,  c = (p+16)·2⁻²³,
//
// which cannot miss a pair whose exact distance is within the threshold:
// rounding the centred features to float32 moves d² by at most
// 4.1u(|a_i|²+|a_j|²) (u = 2⁻²⁴), the float32 norms, the fused dot-product
// chain of p terms and the two final roundings by at most (p+5)u times the
// same sum, and SqDist's own rounding by far less; c is twice their sum.
// The threshold is rounded up to float32, the row and column norms in the
// bound are the tile's largest on the other side, and tiny (p+8)·1e-37
// covers float32 underflow.
type pairsVector struct {
	x        []float64 // the features, for the exact distances
	p        int
	a32, n32 []float32 // centred features (n×p) and their squared norms
	n64      []float64 // the same norms, exactly
	c, tiny  float64
}

// maxCentred bounds the centred features of the vectorized screen: their
// squares and the sums of p of them stay far inside float32's range.
const maxCentred = 1e15

// newPairsVector packs x (n×p) for the vectorized screen, or returns nil
// where it is not built, the CPU lacks AVX-512, or a centred feature is out
// of float32's reach.
func newPairsVector(x []float64, n, p int) *pairsVector {
	if !simdUsable() || n == 0 {
		return nil
	}
	mean := columnMeans(x, n, p)
	v := &pairsVector{
		x: x, p: p, a32: make([]float32, n*p), n32: make([]float32, n), n64: make([]float64, n),
		c: float64(p+16) * 0x1p-23, tiny: float64(p+8) * 1e-37,
	}
	for i := range n {
		var s float64
		for q, f := range x[i*p : (i+1)*p] {
			c := f - mean[q]
			if !(math.Abs(c) <= maxCentred) {
				return nil
			}
			a := float32(c)
			v.a32[i*p+q] = a
			s += float64(a) * float64(a)
		}
		v.n64[i], v.n32[i] = s, float32(s)
	}
	return v
}

// pairsScratch is one goroutine's panels for pairsVector.
type pairsScratch struct {
	t      []float32 // the tile of approximate distances, hp×wp
	xr, xt []float32 // row features (hp×p, grouped by 8), column features transposed (p×wp)
	gr, gc []float32 // squared norms of rows and columns
	rth    []float32 // the rows' screening thresholds
	cth    []float32 // the columns' screening thresholds
}

func (v *pairsVector) newScratch(b int) any {
	bp, p := roundUp(b, 16), v.p
	return &pairsScratch{
		t: make([]float32, bp*bp), xr: make([]float32, bp*p), xt: make([]float32, p*bp),
		gr: make([]float32, bp), gc: make([]float32, bp),
		rth: make([]float32, bp), cth: make([]float32, bp),
	}
}

// up32 returns the least float32 at or above v (+Inf stays +Inf).
func up32(v float64) float32 {
	f := float32(v)
	if float64(f) < v {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// near is Pairs.Near on the vectorized screen.
func (v *pairsVector) near(scratch any, r0, r1, c0, c1 int, rowMax, colMax []float64, near func(i, j int, d float64)) {
	s := scratch.(*pairsScratch)
	h, w := r1-r0, c1-c0
	if h <= 0 || w <= 0 {
		return
	}
	hp, wp, p := roundUp(h, 8), roundUp(w, 16), v.p
	maxR, maxC := 0.0, 0.0
	for _, n := range v.n64[r0:r1] {
		maxR = max(maxR, n)
	}
	for _, n := range v.n64[c0:c1] {
		maxC = max(maxC, n)
	}
	rowTh := func(li int) float32 { return up32(rowMax[li] + v.c*(v.n64[r0+li]+maxC) + v.tiny) }
	colTh := func(lj int) float32 { return up32(colMax[lj] + v.c*(v.n64[c0+lj]+maxR) + v.tiny) }

	// Packing and generation.
	archsimd.ClearAVXUpperBits()
	xr, xt, t := s.xr[:hp*p], s.xt[:p*wp], s.t[:hp*wp]
	packTile(xr, xt, s.gr[:hp], s.gc[:wp], v.a32, v.n32, p, 8, r0, r1, c0, c1)
	rth, cth := s.rth[:h], s.cth[:wp]
	for li := range rth {
		rth[li] = rowTh(li)
	}
	for lj := range w {
		cth[lj] = colTh(lj)
	}
	clear(cth[w:])
	dotTile32(t, hp, wp, xr, xt, p, s.gr, s.gc, -2, false)
	archsimd.ClearAVXUpperBits()

	// Screening: the pairs under either threshold are recomputed exactly,
	// in row-major order, and reported if they pass the exact thresholds.
	x := v.x
	for li := range h {
		i := r0 + li
		start := 0
		if r0 == c0 {
			start = li + 1 // the upper triangle of a diagonal tile
		}
		rv := archsimd.BroadcastFloat32x16(rth[li])
		for j0 := start &^ 15; j0 < w; j0 += 16 {
			tv := archsimd.LoadFloat32x16Slice(t[li*wp+j0:])
			cv := archsimd.LoadFloat32x16Slice(cth[j0:])
			hit := uint32(tv.LessEqual(rv).Or(tv.LessEqual(cv)).ToBits())
			if j0 < start {
				hit &= ^uint32(0) << (start - j0)
			}
			if j0+16 > w {
				hit &= 1<<(w-j0) - 1
			}
			if hit == 0 {
				continue
			}
			// A scalar phase: the thresholds are read back from memory.
			archsimd.ClearAVXUpperBits()
			for ; hit != 0; hit &= hit - 1 {
				lj := j0 + bits.TrailingZeros32(hit)
				j := c0 + lj
				d := SqDist(x[i*p:(i+1)*p], x[j*p:(j+1)*p])
				if d <= rowMax[li] || d <= colMax[lj] {
					near(i, j, d)
					rth[li], cth[lj] = rowTh(li), colTh(lj)
				}
			}
			rv = archsimd.BroadcastFloat32x16(rth[li])
		}
	}
	archsimd.ClearAVXUpperBits()
}
