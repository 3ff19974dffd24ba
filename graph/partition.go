package graph

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"golang.org/x/sync/errgroup"

	"github.com/ssnmf/ssnmf/internal/fault"
	"github.com/ssnmf/ssnmf/store"
)

// partitionSample is the number of rows of a range whose principal
// direction splits it.
const partitionSample = 256

// Partition reorders the n rows of x (n×p, row-major) in place into the
// leaves of a principal-direction tree, and returns order, where order[q]
// is the row, in the input's numbering, now at position q.
//
// A range of rows that spans more than one block of leaf rows is split in
// two at a whole number of blocks (the first half holds ⌊blocks/2⌋ of them):
// its rows are projected on the principal direction of a sample of them
// (power iteration from a seeded start), and the rows of the smaller
// projections (ties to the lower input row) go to the front. So every
// block of leaf rows of the result, [I·leaf, (I+1)·leaf), is a leaf: rows
// near in space are near in position, which is what the approximate
// neighbour search (KNN with Approximate) and a sweep over the graph built
// in this order rely on.
//
// The rows are moved, not indexed, and each split reads its range once, so
// x may be a memory-mapped file larger than memory, read about once a level
// of the tree whose ranges do not fit in the page cache. A split finds the
// projection of its cut in memory, by a radix selection over the
// projections; then one pass from both ends swaps the rows on the wrong
// side of it and projects every row on the direction of the half it goes
// to, whose sample (evenly spaced among the half's rows, in the order they
// had) was read before. The heap holds two words a row (the order and the
// projections). The ranges of a level are split on up to workers
// goroutines; each split depends only on its own rows and on seed, so the
// order is the same for any workers.
func Partition(ctx context.Context, x []float64, n, p, leaf int, seed uint64, workers int) ([]int32, error) {
	switch {
	case n < 0 || p < 0 || len(x) != n*p:
		return nil, fmt.Errorf("graph: partition of %d values as %d rows of %d features", len(x), n, p)
	case n > math.MaxInt32:
		return nil, fmt.Errorf("graph: %d rows, at most %d fit int32 indices", n, math.MaxInt32)
	case leaf < 1:
		return nil, fmt.Errorf("graph: leaf of %d rows, want at least 1", leaf)
	}
	pt := &partition{x: x, p: p, leaf: leaf, seed: seed, order: make([]int32, n), key: make([]uint64, n)}
	for i := range pt.order {
		pt.order[i] = int32(i)
	}
	if n > leaf {
		s := min(partitionSample, n)
		pos := make([]int, s)
		for r := range pos {
			pos[r] = int(int64(r) * int64(n) / int64(s))
		}
		v := pt.direction(0, pos)
		for i := range n {
			pt.project(i, v)
		}
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, workers))
	var split func(lo, hi int) error
	split = func(lo, hi int) error {
		for hi-lo > leaf {
			if err := ctx.Err(); err != nil {
				return err
			}
			blocks := (hi - lo + leaf - 1) / leaf
			cut := lo + blocks/2*leaf
			pt.split(lo, hi, cut)
			// The right half goes to another goroutine if one is free; the
			// left half is split here.
			rlo, rhi := cut, hi
			if !g.TryGo(fault.Guard(func() error { return split(rlo, rhi) })) {
				if err := split(rlo, rhi); err != nil {
					return err
				}
			}
			hi = cut
		}
		return nil
	}
	g.Go(fault.Guard(func() error { return split(0, n) }))
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return pt.order, nil
}

// partition is the state of a Partition: the rows, their order and their
// projections, of which each split touches only its own range.
type partition struct {
	x     []float64
	p     int
	leaf  int
	seed  uint64
	order []int32
	// key holds each row's projection on the direction of its range, in
	// sortable bits (sortable).
	key []uint64
}

// rank is a row's place in a split's order: its projection's sortable
// bits, then its input row.
type rank struct {
	key uint64
	row int32
}

func (a rank) less(b rank) bool { return a.key < b.key || a.key == b.key && a.row < b.row }

// rankOf returns the rank of the row at position i.
func (pt *partition) rankOf(i int) rank { return rank{pt.key[i], pt.order[i]} }

// sortable returns bits of v that order as v does, -0 before +0.
func sortable(v float64) uint64 {
	b := math.Float64bits(v)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// project sets the key of the row at position i to its projection on v,
// if v is not nil.
func (pt *partition) project(i int, v []float64) {
	if v == nil {
		return
	}
	var s float64
	for q, a := range pt.x[i*pt.p : (i+1)*pt.p] {
		s += float64(a * v[q]) // rounded: no fused multiply-add, the same split on every architecture
	}
	if math.IsNaN(s) {
		s = 0 // features of opposite infinite products: keep them somewhere
	}
	pt.key[i] = sortable(s)
}

// split moves the rows of [lo, hi) whose projection on the range's
// direction is among the cut-lo smallest (by rank) to [lo, cut), the others
// to [cut, hi), and leaves the key of each on the direction of its half,
// where that half is split again.
func (pt *partition) split(lo, hi, cut int) {
	pivot := pt.cutRank(lo, hi, cut-lo)
	var vl, vr []float64
	if cut-lo > pt.leaf || hi-cut > pt.leaf {
		first, second := pt.samples(lo, hi, cut, pivot)
		if cut-lo > pt.leaf {
			vl = pt.direction(lo, first)
		}
		if hi-cut > pt.leaf {
			vr = pt.direction(cut, second)
		}
	}
	x, p := pt.x, pt.p
	i, j := lo, hi-1
	for {
		for i < cut && pt.rankOf(i).less(pivot) {
			pt.project(i, vl)
			i++
		}
		for j >= cut && !pt.rankOf(j).less(pivot) {
			pt.project(j, vr)
			j--
		}
		if i == cut {
			return
		}
		// Exactly cut-lo rows rank below the pivot: a row of the first half
		// at i that does not, one of the second at j that does.
		pt.order[i], pt.order[j] = pt.order[j], pt.order[i]
		a, b := x[i*p:(i+1)*p], x[j*p:(j+1)*p]
		for q := range a {
			a[q], b[q] = b[q], a[q]
		}
		pt.project(i, vl)
		pt.project(j, vr)
		i, j = i+1, j-1
	}
}

// samples returns the positions of the samples of the halves of [lo, hi)
// cut at cut: of at most partitionSample rows each, those that rank below
// pivot (the first half) or not, evenly spaced among them in the order of
// the range.
func (pt *partition) samples(lo, hi, cut int, pivot rank) (first, second []int) {
	var pos [2][]int
	var size, seen [2]int
	size[0], size[1] = cut-lo, hi-cut
	for h := range pos {
		pos[h] = make([]int, 0, min(partitionSample, size[h]))
	}
	for i := lo; i < hi; i++ {
		h := 1
		if pt.rankOf(i).less(pivot) {
			h = 0
		}
		if s := cap(pos[h]); len(pos[h]) < s && int64(seen[h]) == int64(len(pos[h]))*int64(size[h])/int64(s) {
			pos[h] = append(pos[h], i)
		}
		seen[h]++
	}
	return pos[0], pos[1]
}

// selectDirect is the number of candidates below which cutRank sorts
// them rather than count another byte.
const selectDirect = 2048

// cutRank returns the rank of order r (from 0) among those of the rows
// [lo, hi): a radix selection, a byte at a time from the top of the
// rank's 12 (the key's 8, then the row's 4), each pass counting the
// candidates that share the bytes chosen so far, until few enough are left
// to sort.
func (pt *partition) cutRank(lo, hi, r int) rank {
	keys, rows := pt.key[lo:hi], pt.order[lo:hi]
	var prefix rank // its first b bytes chosen
	b, count := 0, hi-lo
	for ; b < 12 && count > selectDirect; b++ {
		var hist [256]int
		for e, k := range keys {
			if c := (rank{k, rows[e]}); prefix.shares(c, b) {
				hist[c.byte(b)]++
			}
		}
		d := 0
		for ; r >= hist[d]; d++ {
			r -= hist[d]
		}
		prefix = prefix.withByte(b, byte(d))
		count = hist[d]
	}
	cand := make([]rank, 0, count)
	for e, k := range keys {
		if c := (rank{k, rows[e]}); prefix.shares(c, b) {
			cand = append(cand, c)
		}
	}
	return selectRank(cand, r)
}

// selectRank returns the element of order r (from 0) of a, distinct ranks,
// and leaves a reordered: Hoare's quickselect, the median of the first,
// middle and last as pivot.
func selectRank(a []rank, r int) rank {
	lo, hi := 0, len(a)-1
	for lo < hi {
		x, y, z := a[lo], a[(lo+hi)/2], a[hi]
		if y.less(x) {
			x, y = y, x
		}
		if z.less(y) {
			y = z
			if y.less(x) {
				y = x
			}
		}
		pivot := y
		i, j := lo, hi
		for i <= j {
			for a[i].less(pivot) {
				i++
			}
			for pivot.less(a[j]) {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case r <= j:
			hi = j
		case r >= i:
			lo = i
		default:
			return a[r]
		}
	}
	return a[r]
}

// byte returns byte b (from 0, the top) of a's 12: the key's, then the
// row's.
func (a rank) byte(b int) byte {
	if b < 8 {
		return byte(a.key >> (56 - 8*b))
	}
	return byte(uint32(a.row) >> (24 - 8*(b-8)))
}

// withByte returns a with byte b set to d (a's bytes after b are zero).
func (a rank) withByte(b int, d byte) rank {
	if b < 8 {
		a.key |= uint64(d) << (56 - 8*b)
	} else {
		a.row = int32(uint32(a.row) | uint32(d)<<(24-8*(b-8)))
	}
	return a
}

// shares reports whether c has a's first b bytes.
func (a rank) shares(c rank, b int) bool {
	switch {
	case b == 0:
		return true
	case b <= 8:
		return a.key>>(64-8*b) == c.key>>(64-8*b)
	case a.key != c.key:
		return false
	}
	return uint32(a.row)>>(32-8*(b-8)) == uint32(c.row)>>(32-8*(b-8))
}

// direction returns the principal direction of the rows at positions pos
// of the range that starts at lo: twelve steps of the power method on the
// centred sample from a start seeded by lo, scaled to the largest
// component 1. A sample without spread gives the start.
func (pt *partition) direction(lo int, pos []int) []float64 {
	x, p := pt.x, pt.p
	s := len(pos)
	rows := store.GatherRows(make([]float64, s*p), x, p, pos) // rows far apart: see GatherRows
	mean := make([]float64, p)
	for r := range s {
		for q, a := range rows[r*p : (r+1)*p] {
			mean[q] += a / float64(s)
		}
	}
	for r := range s {
		for q := range p {
			rows[r*p+q] -= mean[q]
		}
	}
	rng := rand.New(rand.NewPCG(pt.seed^0x9e3779b97f4a7c15, uint64(lo)))
	v, next := make([]float64, p), make([]float64, p)
	for q := range v {
		v[q] = rng.NormFloat64()
	}
	for range 12 {
		clear(next)
		for r := range s {
			row := rows[r*p : (r+1)*p]
			var t float64
			for q, a := range row {
				t += float64(a * v[q])
			}
			for q, a := range row {
				next[q] += float64(t * a)
			}
		}
		var norm float64
		for _, a := range next {
			norm = max(norm, math.Abs(a))
		}
		if !(norm > 0) || math.IsInf(norm, 0) {
			break
		}
		for q := range v {
			v[q] = next[q] / norm
		}
	}
	return v
}

// LeafCentroids returns the mean of the rows of each leaf of x (n×p,
// row-major) in the order of Partition: leaf l holds rows
// [l·leaf, min(n, (l+1)·leaf)). The centroids are ⌈n/leaf⌉×p, row-major.
func LeafCentroids(x []float64, n, p, leaf int) []float64 {
	leaves := (n + leaf - 1) / leaf
	c := make([]float64, leaves*p)
	for l := range leaves {
		lo, hi := l*leaf, min(n, (l+1)*leaf)
		row := c[l*p : (l+1)*p]
		for i := lo; i < hi; i++ {
			for q, v := range x[i*p : (i+1)*p] {
				row[q] += v
			}
		}
		for q := range row {
			row[q] /= float64(hi - lo)
		}
	}
	return c
}
