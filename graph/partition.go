package graph

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"golang.org/x/sync/errgroup"

	"github.com/ssnmf/ssnmf/internal/fault"
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
// its rows are projected on the principal direction of an evenly spaced
// sample of them (power iteration from a seeded start), and the rows with
// the smaller projections are moved, by quickselect, to the front. So every
// block of leaf rows of the result, [I·leaf, (I+1)·leaf), is a leaf: rows
// near in space are near in position, which is what the approximate
// neighbour search (KNN with Approximate) and a sweep over the graph built
// in this order rely on.
//
// The rows are moved, not indexed: each split streams over its range from
// both ends, so x may be a memory-mapped file larger than memory. The heap
// holds two words a row (the order and the projections). The ranges of a
// level are split on up to workers goroutines; each split depends only on
// its own rows and on seed, so the order is the same for any workers.
func Partition(ctx context.Context, x []float64, n, p, leaf int, seed uint64, workers int) ([]int32, error) {
	switch {
	case n < 0 || p < 0 || len(x) != n*p:
		return nil, fmt.Errorf("graph: partition of %d values as %d rows of %d features", len(x), n, p)
	case n > math.MaxInt32:
		return nil, fmt.Errorf("graph: %d rows, at most %d fit int32 indices", n, math.MaxInt32)
	case leaf < 1:
		return nil, fmt.Errorf("graph: leaf of %d rows, want at least 1", leaf)
	}
	pt := &partition{x: x, p: p, leaf: leaf, seed: seed, order: make([]int32, n), key: make([]float64, n)}
	for i := range pt.order {
		pt.order[i] = int32(i)
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
	key   []float64
}

// split moves the rows of [lo, hi) whose projection on the range's
// principal direction is among the cut-lo smallest to [lo, cut).
func (pt *partition) split(lo, hi, cut int) {
	x, p := pt.x, pt.p
	v := pt.direction(lo, hi)
	for i := lo; i < hi; i++ {
		var s float64
		for q, a := range x[i*p : (i+1)*p] {
			s += float64(a * v[q]) // rounded: no fused multiply-add, the same split on every architecture
		}
		if math.IsNaN(s) {
			s = 0 // features of opposite infinite products: keep them somewhere
		}
		pt.key[i] = s
	}
	rng := rand.New(rand.NewPCG(pt.seed, uint64(lo)<<32|uint64(hi)))
	tmp := make([]float64, p)
	swap := func(i, j int) {
		pt.key[i], pt.key[j] = pt.key[j], pt.key[i]
		pt.order[i], pt.order[j] = pt.order[j], pt.order[i]
		copy(tmp, x[i*p:(i+1)*p])
		copy(x[i*p:(i+1)*p], x[j*p:(j+1)*p])
		copy(x[j*p:(j+1)*p], tmp)
	}
	// Hoare's quickselect: after each partition [lo, j] <= pivot <= [i, hi),
	// and any cut in (j, i] is reached.
	for hi-lo > 1 {
		pivot := pt.key[lo+rng.IntN(hi-lo)]
		i, j := lo, hi-1
		for i <= j {
			for pt.key[i] < pivot {
				i++
			}
			for pt.key[j] > pivot {
				j--
			}
			if i <= j {
				swap(i, j)
				i++
				j--
			}
		}
		switch {
		case cut <= j:
			hi = j + 1
		case cut >= i:
			lo = i
		default:
			return
		}
	}
}

// direction returns the principal direction of an evenly spaced sample of
// the rows [lo, hi): twelve steps of the power method on the centred
// sample from a start seeded by the range, scaled to the largest
// component 1. A sample without spread gives the start.
func (pt *partition) direction(lo, hi int) []float64 {
	x, p := pt.x, pt.p
	s := min(partitionSample, hi-lo)
	rows := make([]float64, s*p)
	mean := make([]float64, p)
	for r := range s {
		i := lo + int(int64(r)*int64(hi-lo)/int64(s))
		copy(rows[r*p:(r+1)*p], x[i*p:(i+1)*p])
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
