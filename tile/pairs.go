package tile

import (
	"fmt"
	"sync"
)

// Pairs screens the pairs of rows of a feature matrix by squared Euclidean
// distance, one tile of pairs at a time: the work of an exact
// nearest-neighbour search over the upper triangle of the tile grid.
//
// The distances it reports are exact, SqDist of the two rows, whichever
// kernel screens them. The portable kernel computes every distance that
// way. The vectorized kernel (the Gaussian's micro-kernels, in float32 by
// the norms identity on centred features, without the exponential) computes
// a tile of approximate distances and recomputes exactly only the pairs
// whose approximation is within a proven rounding bound of a threshold, so
// the two kernels report the same pairs with the same bits.
type Pairs struct {
	x       []float64
	n, p    int
	generic bool

	once sync.Once
	vec  *pairsVector // nil: the portable kernel
}

// NewPairs returns the screen of the n rows of x (n×p, row-major). With
// generic set it always runs the portable kernel. Pairs keeps x, which
// must not change while it is in use; it is safe for concurrent use with
// one PairScratch per goroutine.
func NewPairs(x []float64, n, p int, generic bool) (*Pairs, error) {
	if n < 0 || p < 0 || len(x) != n*p {
		return nil, fmt.Errorf("tile: %d values as %d rows of %d features", len(x), n, p)
	}
	return &Pairs{x: x, n: n, p: p, generic: generic}, nil
}

// vector returns the vectorized screen, packing it on first use, or nil.
func (ps *Pairs) vector() *pairsVector {
	if ps.generic {
		return nil
	}
	ps.once.Do(func() { ps.vec = newPairsVector(ps.x, ps.n, ps.p) })
	return ps.vec
}

// Kernel names the kernel that screens the pairs: "avx512/float32" for the
// vectorized one, "go/float64" for the portable one. The vectorized kernel
// needs GOEXPERIMENT=simd on amd64, a CPU with AVX-512, and features whose
// centred values stay below 1e15 in magnitude (float32 must hold their
// squares without overflow).
func (ps *Pairs) Kernel() string {
	if ps.vector() != nil {
		return simdName + "/float32"
	}
	return "go/float64"
}

// PairScratch is one goroutine's memory for Pairs.Near.
type PairScratch struct {
	b   int
	vec any // the vectorized kernel's panels, or nil
}

// NewScratch returns memory for tiles of edge at most b.
func (ps *Pairs) NewScratch(b int) *PairScratch {
	s := &PairScratch{b: b}
	if v := ps.vector(); v != nil {
		s.vec = v.newScratch(b)
	}
	return s
}

// Near calls near(i, j, d) for each pair of a row i in [r0, r1) and a row j
// in [c0, c1) with i < j whose squared distance d = SqDist(x_i, x_j) is at
// most rowMax[i-r0] or colMax[j-c0], in row-major order (by i, then j).
//
// near may lower the entries of rowMax and colMax, and the screen then
// applies the lowered thresholds to the pairs that follow, so the pairs
// reported, and the order, are the same for both kernels. The tile's edges,
// r1-r0 and c1-c0, are at most the scratch's b; rowMax and colMax are at
// least as long.
func (ps *Pairs) Near(s *PairScratch, r0, r1, c0, c1 int, rowMax, colMax []float64, near func(i, j int, d float64)) {
	if r1-r0 > s.b || c1-c0 > s.b || r0 < 0 || c0 < 0 || r1 > ps.n || c1 > ps.n || len(rowMax) < r1-r0 || len(colMax) < c1-c0 {
		panic(fmt.Sprintf("tile: Near of tile [%d,%d)×[%d,%d) with scratch edge %d and %d rows", r0, r1, c0, c1, s.b, ps.n))
	}
	if v := ps.vector(); v != nil && s.vec != nil {
		v.near(s.vec, r0, r1, c0, c1, rowMax, colMax, near)
		return
	}
	x, p := ps.x, ps.p
	var ds [4]float64
	for i := r0; i < r1; i++ {
		xi := x[i*p : (i+1)*p]
		for j0 := max(c0, i+1); j0 < c1; j0 += len(ds) {
			nj := min(len(ds), c1-j0)
			if nj == len(ds) {
				ds[0], ds[1], ds[2], ds[3] = sqDist4(xi, x[j0*p:(j0+4)*p])
			} else {
				for e := range nj {
					ds[e] = SqDist(xi, x[(j0+e)*p:(j0+e+1)*p])
				}
			}
			for e, d := range ds[:nj] {
				if j := j0 + e; d <= rowMax[i-r0] || d <= colMax[j-c0] {
					near(i, j, d)
				}
			}
		}
	}
}

// sqDist4 returns the squared distances of a to the four consecutive rows
// in b (4×len(a)), each with the bits of SqDist: the four sums are
// independent, which lets the processor overlap them.
func sqDist4(a, b []float64) (d0, d1, d2, d3 float64) {
	p := len(a)
	b0, b1, b2, b3 := b[:p], b[p:2*p], b[2*p:3*p], b[3*p:4*p]
	for q, v := range a {
		t0, t1, t2, t3 := v-b0[q], v-b1[q], v-b2[q], v-b3[q]
		d0 += t0 * t0
		d1 += t1 * t1
		d2 += t2 * t2
		d3 += t3 * t3
	}
	return d0, d1, d2, d3
}
