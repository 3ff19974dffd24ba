package tile

import (
	"context"
	"math"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/ssnmf/ssnmf/internal/ordered"
)

// pairsVector is the vectorized screen of Pairs. A tile of approximate
// squared distances t_ij = |a_i|² + |a_j|² - 2 a_i·a_j comes from a
// family's dot-product micro-kernels (screenKernel) on the centred
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
// covers float32 underflow. Every family computes the same tile, with the
// same bits: each t_ij is a chain of p fused multiply-adds in feature
// order, then one addition and one fused multiply-add.
//
// The panels the micro-kernels read are packed once, for every block of
// rows: the rows grouped by 8 (hp×p) and transposed (p×bp, bp the block
// edge rounded up to 64), 2·n·p float32 in all.
type pairsVector struct {
	k       *screenKernel
	x       []float64 // the features, for the exact distances
	n, p, b int
	bp      int       // the block edge rounded up to 64: the stride of a tile
	xr, xt  []float32 // every block's panels, bp·p values each
	n32     []float32 // squared norms of the centred features, padded to whole blocks
	n64     []float64 // the same norms, exactly
	blockN  []float64 // the largest of n64 in each block
	c, tiny float64
}

// screenKernel is one family's code for the vectorized screen. Both
// functions need the family's instructions: call them only where
// cpuHas(family) holds.
type screenKernel struct {
	isa ISA
	// dot is the dot-product micro-kernel. It writes the rows×cols block
	// t[r*wp+c] = tg·(x_r·x_c) + (gc[c] + gr[r]) (r < rows, c < cols)
	// where xr holds the rows' features within their group of 8 (xr[q*8+r];
	// rows divides 8) and xt the columns' transposed (xt[q*wp+c]; cols
	// divides 64); the dot product is a chain of float32 fused
	// multiply-adds in feature order, from 0.
	rows, cols int
	dot        func(t *float32, wp int, xr, xt *float32, p int, gr, gc, tg *float32)
	// screen, where not nil, is dot with the thresholds tested in place
	// of the stores: it writes the masks of rows rows and words (at least
	// 1) times 64 columns, bit j of out[r*words+w] being t <= rth[r] ||
	// t <= cth[c] for the entry t of row r, column c = 64w+j, that dot
	// writes (ld is xt's stride).
	screen func(out *uint64, words int, xr, xt *float32, ld, p int, nr, nc, rth, cth, tg *float32)
	// mask, for a family without screen, writes words (at least 1) 64-bit
	// masks of a row of dot's tile: bit j of out[w] is t[64w+j] <= rth ||
	// t[64w+j] <= cth[64w+j].
	mask func(t, cth *float32, rth float32, words int, out *uint64)
}

// maxCentred bounds the centred features of the vectorized screen: their
// squares and the sums of p of them stay far inside float32's range.
const maxCentred = 1e15

// newPairsVector packs x (n×p) in blocks of b rows for the vectorized
// screen of family k (resolved), on workers goroutines, or returns nil
// where k has no screen (ISAGo), the memory cannot be had, or a centred
// feature is out of float32's reach. Its error is a fault of the memory,
// where it is a mapped file (fault.Guard).
func newPairsVector(k ISA, x []float64, n, p, b, workers int, memory func(int) ([]byte, error)) (*pairsVector, error) {
	sk := screenKernelOf(k)
	if sk == nil || n == 0 {
		return nil, nil
	}
	nb, bp := (n+b-1)/b, roundUp(b, 64)
	mean := ColumnMeans(x, n, p)
	// The panels, the float32 norms padded to whole blocks (an even number
	// of values, so that the float64 norms after them are aligned) and the
	// float64 norms, in one piece of memory.
	panel, n32 := nb*bp*p, roundUp(nb*bp, 2)
	mem, err := memory(4*(2*panel+n32) + 8*n)
	if err != nil {
		return nil, nil
	}
	f32 := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(mem))), 2*panel+n32)
	v := &pairsVector{
		k: sk, x: x, n: n, p: p, b: b, bp: bp,
		xr: f32[:panel:panel], xt: f32[panel : 2*panel : 2*panel],
		n32:    f32[2*panel : 2*panel+nb*bp : 2*panel+nb*bp],
		n64:    unsafe.Slice((*float64)(unsafe.Pointer(&mem[4*(2*panel+n32)])), n),
		blockN: make([]float64, nb),
		c:      float64(p+16) * 0x1p-23, tiny: float64(p+8) * 1e-37,
	}
	// The blocks are packed independently, a block a task, each with a
	// goroutine's scratch row block.
	var far atomic.Bool // a centred feature is out of reach
	scratch := make(chan []float32, max(1, workers))
	for range max(1, workers) {
		scratch <- make([]float32, b*p)
	}
	pack := func(blk int) {
		a := <-scratch
		if !far.Load() && !v.pack(blk, mean, a) {
			far.Store(true)
		}
		scratch <- a
	}
	if workers <= 1 {
		for blk := range nb {
			pack(blk)
		}
	} else if err := ordered.Each(context.Background(), workers, nb, pack); err != nil {
		return nil, err
	}
	if far.Load() {
		return nil, nil
	}
	return v, nil
}

// pack packs block blk of the rows, centred by mean, with a (b·p values)
// as scratch, and reports whether every centred feature is within reach
// (maxCentred).
func (v *pairsVector) pack(blk int, mean []float64, a []float32) bool {
	b, p, bp := v.b, v.p, v.bp
	r0, r1 := blk*b, min(v.n, (blk+1)*b)
	for i := r0; i < r1; i++ {
		var s float64
		for q, f := range v.x[i*p : (i+1)*p] {
			c := f - mean[q]
			if !(math.Abs(c) <= maxCentred) {
				return false
			}
			a32 := float32(c)
			a[(i-r0)*p+q] = a32
			v.xt[blk*bp*p+q*bp+i-r0] = a32
			s += float64(a32) * float64(a32) // exact: no fused rounding to differ
		}
		v.n64[i], v.n32[blk*bp+i-r0] = s, float32(s)
		if s > v.blockN[blk] { // the norms are not NaN: no need of max's care
			v.blockN[blk] = s
		}
	}
	packRows(v.xr[blk*bp*p:(blk+1)*bp*p], a[:(r1-r0)*p], p, 8)
	return true
}

// pairsScratch is one goroutine's memory for pairsVector.
type pairsScratch struct {
	t    []float32 // the tile of approximate distances, hp×bp
	rth  []float32 // the rows' screening thresholds
	cth  []float32 // the columns' screening thresholds
	hitI []int32   // the rows and columns of the pairs that pass the
	hitJ []int32   // screen for a group of 8 rows, as rows of x
	mask []uint64  // the screen of a group of 8 rows, 64 columns a word
	sel  []float32 // a row's approximate distances, for within
	dist []float64 // their exact distances
}

func (v *pairsVector) newScratch() any {
	return &pairsScratch{t: make([]float32, v.bp*v.bp), rth: make([]float32, v.bp), cth: make([]float32, v.bp),
		hitI: make([]int32, 0, 8*v.bp), hitJ: make([]int32, 0, 8*v.bp), mask: make([]uint64, 8*v.bp/64), dist: make([]float64, 8*v.bp), sel: make([]float32, v.bp)}
}

// up32 returns a float32 at or above v, at most 2⁻²¹|v| above it (+Inf
// stays +Inf), for v = 0 or |v| at least float32's least normal, 2⁻¹²⁶
// (the thresholds add tiny, far above it).
func up32(v float64) float32 { return float32(v + math.Abs(v)*0x1p-22) }

// near is Pairs.Near on the vectorized screen.
func (v *pairsVector) near(scratch any, I, J int, rowMax, colMax []float64, near func(i, j int, d float64)) {
	s := scratch.(*pairsScratch)
	r0, r1, c0, c1 := I*v.b, min(v.n, (I+1)*v.b), J*v.b, min(v.n, (J+1)*v.b)
	h, w := r1-r0, c1-c0
	hp, bp, p := roundUp(h, 8), v.bp, v.p
	wp := roundUp(w, 64)

	rth, cth := s.rth[:hp], s.cth[:wp]
	for li := range h {
		rth[li] = v.rowTh(li, rowMax, r0, c0)
	}
	for lj := range w {
		cth[lj] = v.colTh(lj, colMax, r0, c0)
	}
	clear(cth[w:])
	xr, xt := v.xr[I*bp*p:(I+1)*bp*p], v.xt[J*bp*p:(J+1)*bp*p]
	nr, nc := v.n32[I*bp:(I+1)*bp], v.n32[J*bp:(J+1)*bp]

	// Screening, 8 rows at a time: the pairs under either threshold are
	// gathered, row by row; once there are screenBatch of them, and after
	// the last group, they are recomputed exactly, four pairs at a time,
	// and reported in order if they pass the exact thresholds. A threshold
	// lowered by a report applies to the screen from the next group on:
	// until then the screen passes more pairs than it must, which the exact
	// thresholds then turn away.
	hi, hj := s.hitI[:0], s.hitJ[:0]
	for i0 := 0; i0 < h; i0 += 8 {
		// The group's screen from the first word any of its rows needs
		// (on a diagonal tile, the upper triangle only).
		first := 0
		if I == J {
			first = (i0 + 1) &^ 63
		}
		if first >= w {
			break
		}
		words := (wp - first) / 64
		rows := min(8, h-i0)
		m := s.mask[:rows*words]
		v.screenRows(s, s.mask[:8*words], xr, xt, nr, nc, i0, first, words)
		last := ^uint64(0) >> (63 - (w-1-first)%64) // no column past w
		for r := range rows {
			m[r*words+words-1] &= last
			if I == J {
				// Only the columns past the row's own.
				for e, lo := 0, i0+r+1-first; e < words && lo > 64*e; e++ {
					m[r*words+e] &= ^uint64(0) << min(64, lo-64*e)
				}
			}
		}
		hi, hj = gatherHits(hi, hj, m, words, int32(r0+i0), int32(c0+first))
		if len(hi) >= screenBatch {
			hi, hj = v.recheck(s, hi, hj, r0, c0, rowMax, colMax, near)
		}
	}
	s.hitI, s.hitJ = v.recheck(s, hi, hj, r0, c0, rowMax, colMax, near)
}

// gatherHits appends to hi and hj the pairs whose bits are set in the
// masks m of a group's rows (words words a row, row0 and col0 its first
// row and column as rows of x), in row-major order. It looks at the words
// 64 at a time: most are 0, and a branch on each would mispredict at
// nearly every hit, so the nonzero ones are marked in a word first, without
// branches, and only those visited.
func gatherHits(hi, hj []int32, m []uint64, words int, row0, col0 int32) ([]int32, []int32) {
	for base := 0; base < len(m); base += 64 {
		chunk := m[base:min(len(m), base+64)]
		var nz uint64
		for e, x := range chunk {
			nz |= (x | -x) >> 63 << e
		}
		for ; nz != 0; nz &= nz - 1 {
			e := base + bits.TrailingZeros64(nz)
			row, j0 := row0+int32(e/words), col0+64*int32(e%words)
			for hit := m[e]; hit != 0; hit &= hit - 1 {
				hi, hj = append(hi, row), append(hj, j0+int32(bits.TrailingZeros64(hit)))
			}
		}
	}
	return hi, hj
}

// recheck recomputes the distances of the gathered pairs hi, hj of a tile
// whose first row and column are r0 and c0 exactly, reports in turn those
// within their exact thresholds, lowers the screening thresholds of the
// rows and columns whose exact ones a report lowered, and returns hi and
// hj emptied.
func (v *pairsVector) recheck(s *pairsScratch, hi, hj []int32, r0, c0 int, rowMax, colMax []float64, near func(i, j int, d float64)) ([]int32, []int32) {
	if len(hi) == 0 {
		return hi, hj
	}
	ds := SqDistPairs(v.k.isa, s.dist, v.x, v.p, hi, hj)
	s.dist = ds
	for e, d := range ds {
		li, lj := int(hi[e])-r0, int(hj[e])-c0
		if rm, cm := rowMax[li], colMax[lj]; d <= rm || d <= cm {
			near(r0+li, c0+lj, d)
			// A lowered exact threshold lowers its screen's.
			if rowMax[li] != rm {
				s.rth[li] = v.rowTh(li, rowMax, r0, c0)
			}
			if colMax[lj] != cm {
				s.cth[lj] = v.colTh(lj, colMax, r0, c0)
			}
		}
	}
	return hi[:0], hj[:0]
}

// rowTh returns the screening threshold of row r0+li of a tile whose
// columns start at c0, from its exact one rowMax[li]: the bound of the
// type's doc with the columns' block's largest norm.
func (v *pairsVector) rowTh(li int, rowMax []float64, r0, c0 int) float32 {
	return up32(rowMax[li] + v.c*(v.n64[r0+li]+v.blockN[c0/v.b]) + v.tiny)
}

// colTh is rowTh for column c0+lj, with the rows' block's largest norm.
func (v *pairsVector) colTh(lj int, colMax []float64, r0, c0 int) float32 {
	return up32(colMax[lj] + v.c*(v.n64[c0+lj]+v.blockN[r0/v.b]) + v.tiny)
}

// screenBatch is the number of hits Near gathers before it recomputes and
// reports them: enough for the kernel of SqDistPairs to run long, few
// enough that a lowered threshold soon screens again.
const screenBatch = 64

// screenRows writes into out (8·words words) the screen of the 8 rows
// from i0 of a tile and its words·64 columns from first (a multiple of
// 64), with the thresholds in s: the family's fused kernel, or its dot
// products into s.t and their masks.
func (v *pairsVector) screenRows(s *pairsScratch, out []uint64, xr, xt, nr, nc []float32, i0, first, words int) {
	k, bp, p := v.k, v.bp, v.p
	if len(out) < 8*words || len(xr) < (i0+8)*p || len(xt) < (p-1)*bp+first+64*words || len(nr) < i0+8 ||
		len(nc) < first+64*words || len(s.rth) < i0+8 || len(s.cth) < first+64*words {
		panic("tile: screenRows called with inconsistent sizes") // a bug in this package, not bad input
	}
	tg := float32(-2)
	var xr0, xt0 *float32
	if p > 0 {
		xr0, xt0 = &xr[0], &xt[first]
	}
	for r := 0; r < 8; r += k.rows {
		// The rows' features within their group of 8.
		xi := (*float32)(unsafe.Add(unsafe.Pointer(xr0), 4*(i0*p+r)))
		if k.screen != nil {
			k.screen(&out[r*words], words, xi, xt0, bp, p, &nr[i0+r], &nc[first], &s.rth[i0+r], &s.cth[first], &tg)
			continue
		}
		t := s.t[:k.rows*bp]
		for j0 := 0; j0 < 64*words; j0 += k.cols {
			k.dot(&t[j0], bp, xi, (*float32)(unsafe.Add(unsafe.Pointer(xt0), 4*j0)), p, &nr[i0+r], &nc[first+j0], &tg)
		}
		for e := range k.rows {
			k.mask(&t[e*bp], &s.cth[first], s.rth[i0+r+e], words, &out[(r+e)*words])
		}
	}
}

// within is Pairs.Within on the vectorized screen, for a block of more
// than k rows: the k-th smallest approximate distance of each row to the
// block's others, plus the screen's rounding bound with the block's
// largest norm on the other side (the bound the screen allows either way,
// twice the error's).
func (v *pairsVector) within(scratch any, I, k int, out []float64) {
	s := scratch.(*pairsScratch)
	r0, r1 := I*v.b, min(v.n, (I+1)*v.b)
	h := r1 - r0
	hp, bp, p := roundUp(h, 8), v.bp, v.p
	maxN := v.blockN[I]
	t, xr, xt, nr := s.t[:hp*bp], v.xr[I*bp*p:(I+1)*bp*p], v.xt[I*bp*p:(I+1)*bp*p], v.n32[I*bp:(I+1)*bp]
	v.dotTile(t, hp, bp, roundUp(h, 64), xr, xt, nr, nr)
	for li := range h {
		row := t[li*bp : li*bp+h]
		row[li] = row[h-1] // not its own neighbour
		out[li] = float64(kthBinned(row[:h-1], k, s.sel)) + v.c*(v.n64[r0+li]+maxN) + v.tiny
	}
}

// kthBinned returns the k-th smallest (1 <= k <= len(a)) of a, which holds
// no NaN or infinity, using sel (at least as long as a) as scratch: the
// values are counted in 256 bins of equal width between their least and
// largest, and the k-th is chosen (kthSmallest) among those of its bin
// alone. Binning is monotone, so the bins before the k-th's hold only
// smaller or equal values: three passes of few branches (the extremes,
// the counts, the k-th's bin) and a short selection, where quickselect's
// passes over the whole row mispredict a branch a value. (The extremes
// are found by comparisons: the builtin min and max on floats also order
// NaNs and signed zeros, at several times the cost.)
func kthBinned(a []float32, k int, sel []float32) float32 {
	lo, hi := a[0], a[0]
	for _, x := range a {
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	if lo == hi {
		return lo
	}
	// The largest value's bin would be the 257th: it goes with the 256th.
	const bins = 256
	scale := bins / (float64(hi) - float64(lo))
	var count [bins + 1]int32
	for _, x := range a {
		count[int((float64(x)-float64(lo))*scale)]++
	}
	count[bins-1] += count[bins]
	b, below := 0, 0
	for ; below+int(count[b]) < k; b++ {
		below += int(count[b])
	}
	sel, c := sel[:len(a)], 0
	for _, x := range a {
		sel[c] = x
		if min(bins-1, int((float64(x)-float64(lo))*scale)) == b {
			c++
		}
	}
	sel = sel[:c]
	return kthSmallest(sel, k-below)
}

// dotTile writes the hp×wp tile t (stride bp; hp a multiple of 8, wp of
// 64) of approximate squared distances of the rows packed in xr and the
// columns packed in xt (stride bp), with squared norms nr and nc.
func (v *pairsVector) dotTile(t []float32, hp, bp, wp int, xr, xt, nr, nc []float32) {
	p := v.p
	if len(t) < (hp-1)*bp+wp || len(xr) < hp*p || len(xt) < (p-1)*bp+wp || len(nr) < hp || len(nc) < wp {
		panic("tile: dotTile called with inconsistent sizes") // a bug in this package, not bad input
	}
	tg := float32(-2)
	var xr0, xt0 *float32
	if p > 0 {
		xr0, xt0 = &xr[0], &xt[0]
	}
	k := v.k
	for i0 := 0; i0 < hp; i0 += 8 {
		for r := i0; r < i0+8; r += k.rows {
			xi := (*float32)(unsafe.Add(unsafe.Pointer(xr0), 4*(i0*p+r-i0)))
			for j0 := 0; j0 < wp; j0 += k.cols {
				k.dot(&t[r*bp+j0], bp, xi, (*float32)(unsafe.Add(unsafe.Pointer(xt0), 4*j0)), p, &nr[r], &nc[j0], &tg)
			}
		}
	}
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// packRows writes the rows of x (p values each) into dst grouped by m:
// dst[g*m*p + q*m + r] = x[(g*m+r)*p + q], zero past the last row.
func packRows[F float32 | float64](dst, x []F, p, m int) {
	clear(dst)
	for i := range len(x) / p {
		g, r := i/m, i%m
		for q, v := range x[i*p : (i+1)*p] {
			dst[g*m*p+q*m+r] = v
		}
	}
}
