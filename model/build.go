package model

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/tile"
)

// Training is what a solve hands to Build: its rows as the affinity used
// them and its W, both in the order of the solve (P's order).
type Training struct {
	X    []float64 // n×p, standardized if Mean is not nil
	N, P int
	W    []float64 // n×k, row q that of row q of X
	K    int
	// Names are the feature columns, in order.
	Names []string
	// Mean and Std, if not nil, are the standardization of the raw
	// features (tile.Moments), applied to X.
	Mean, Std []float64
	// Graph, for the kNN affinity, is P's graph (weights unscaled), its
	// rows those of X; nil for the Gaussian affinity.
	Graph     *graph.CSR
	Neighbors int
	Weights   graph.Weights
	Scale     float64
	// Gamma is the Gaussian affinity's bandwidth.
	Gamma float64
	// Leaf, if > 0, says X is already in the order of graph.Partition
	// with leaves of Leaf rows (the approximate search's); otherwise Build
	// partitions a copy with graph.DefaultLeaf, seeded by Seed.
	Leaf    int
	Seed    uint64
	Workers int
	// Search, Input and Method are recorded in Meta.
	Search, Input, Method string
}

// Build makes a model of a solve: for the kNN affinity it finds each
// training row's self-tuning scale σ and reach (the squared distance of
// its M-th neighbour) among the columns of its row of the graph, which
// hold its own neighbours (for an exact graph they are then the training
// lists' values; for an approximate one, the nearest of its list and of
// the rows that list it), puts the rows in leaf order if they are not,
// and computes the leaves' centroids and WᵀW.
func Build(ctx context.Context, t Training) (*Meta, *Arrays, error) {
	n, p, k := t.N, t.P, t.K
	if len(t.X) != n*p || len(t.W) != n*k || len(t.Names) != p {
		return nil, nil, fmt.Errorf("model: %d features, %d memberships and %d names for n = %d, p = %d, k = %d", len(t.X), len(t.W), len(t.Names), n, p, k)
	}
	meta := &Meta{N: n, P: p, K: k, Features: t.Names, Standardize: t.Mean != nil,
		Search: t.Search, Input: t.Input, Method: t.Method, Leaf: t.Leaf}
	a := &Arrays{Features: t.X, W: t.W, Mean: t.Mean, Std: t.Std}
	if a.Mean == nil {
		a.Mean, a.Std = make([]float64, p), make([]float64, p)
	}
	if t.Graph != nil {
		meta.Affinity, meta.Scale = KNN, t.Scale
		meta.Neighbors, meta.Weights = min(max(t.Neighbors, 1), n), t.Weights.String()
		if t.Graph.N() != n {
			return nil, nil, fmt.Errorf("model: a graph of %d rows for %d", t.Graph.N(), n)
		}
		a.Sigma, a.Reach, a.Lists, meta.SigmaFloor = scales(t.Graph, t.X, p, meta.Neighbors)
	} else {
		// Every training row is scanned: one leaf, no reordering.
		meta.Affinity, meta.Gamma, meta.Leaf = Gaussian, t.Gamma, n
	}
	if meta.Leaf <= 0 {
		meta.Leaf = graph.DefaultLeaf
		if err := a.partition(ctx, n, p, k, meta.Leaf, t.Seed, t.Workers); err != nil {
			return nil, nil, err
		}
	}
	a.Centroids = graph.LeafCentroids(a.Features, n, p, meta.Leaf)
	a.Gram = gram(a.W, n, k)
	return meta, a, meta.check()
}

// partition puts copies of the rows into the order of graph.Partition,
// the rows of W, σ and the reach with them.
func (a *Arrays) partition(ctx context.Context, n, p, k, leaf int, seed uint64, workers int) error {
	x := slices.Clone(a.Features)
	order, err := graph.Partition(ctx, x, n, p, leaf, seed, workers)
	if err != nil {
		return err
	}
	a.Features = x
	move := func(v []float64, width int) []float64 {
		if v == nil {
			return nil
		}
		out := make([]float64, len(v))
		for q, i := range order {
			copy(out[q*width:(q+1)*width], v[int(i)*width:(int(i)+1)*width])
		}
		return out
	}
	a.W, a.Sigma, a.Reach = move(a.W, k), move(a.Sigma, 1), move(a.Reach, 1)
	if a.Lists != nil {
		// Rows move, and the rows they name are renumbered.
		at := make([]int32, n)
		for q, i := range order {
			at[i] = int32(q)
		}
		m := len(a.Lists) / n
		lists := make([]int32, len(a.Lists))
		for q, i := range order {
			for e, j := range a.Lists[int(i)*m : (int(i)+1)*m] {
				lists[q*m+e] = at[j]
			}
		}
		a.Lists = lists
	}
	return nil
}

// scales returns each row's self-tuning scale (the distance of the
// graph.SigmaNeighbor-th nearest other row among its row's columns,
// floored as graph.KNN floors it: at 1e-3 times the median positive
// scale, 1 if none), its reach (the squared distance of the m-th
// nearest, the row itself first) and its m nearest rows by (d², row),
// repeated to m if the row has fewer, and the floor.
func scales(g *graph.CSR, x []float64, p, m int) (sigma, reach []float64, lists []int32, floor float64) {
	n := g.N()
	sigma, reach, lists = make([]float64, n), make([]float64, n), make([]int32, n*m)
	var d []cand
	var pos []float64
	for i := range n {
		d = append(d[:0], cand{0, int32(i)})
		for e := g.RowPtr[i]; e < g.RowPtr[i+1]; e++ {
			if j := int(g.Col[e]); j != i {
				d = append(d, cand{tile.SqDist(x[i*p:(i+1)*p], x[j*p:(j+1)*p]), int32(j)})
			}
		}
		slices.SortFunc(d, func(a, b cand) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.j, b.j)) })
		cnt := min(m, len(d))
		for e := range m {
			lists[i*m+e] = d[min(e, cnt-1)].j
		}
		sigma[i] = math.Sqrt(max(d[min(graph.SigmaNeighbor, cnt-1)].d, 0))
		reach[i] = d[cnt-1].d
		if sigma[i] > 0 {
			pos = append(pos, sigma[i])
		}
	}
	floor = 1.0
	if len(pos) > 0 {
		slices.Sort(pos)
		floor = 1e-3 * pos[len(pos)/2]
	}
	for i, s := range sigma {
		sigma[i] = max(s, floor)
	}
	return sigma, reach, lists, floor
}

// gram returns WᵀW (k×k).
func gram(w []float64, n, k int) []float64 {
	g := make([]float64, k*k)
	for i := range n {
		row := w[i*k : (i+1)*k]
		for a, va := range row {
			if va == 0 {
				continue
			}
			for b, vb := range row {
				g[a*k+b] += float64(va * vb)
			}
		}
	}
	return g
}
