package model

import (
	"context"
	"fmt"
	"math"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/internal/fault"
	"github.com/ssnmf/ssnmf/internal/negexp"
	"github.com/ssnmf/ssnmf/tile"
	"golang.org/x/sync/errgroup"
)

// DefaultProbes is the number of leaves the approximate search of a new
// row's neighbours scans, before it walks the training graph, when
// Options.Probes is 0 (docs/predict.md measures the recall it gives).
const DefaultProbes = 8

// Options say how Predict finds a new row's neighbours.
type Options struct {
	// Search is graph.Exact (every training row), graph.Approximate (the
	// rows of the Probes leaves whose centroids are nearest, then a
	// best-first walk of the training graph's lists), or graph.Auto:
	// approximate above graph.ApproxMinRows training rows, as the
	// training graph's search. The Gaussian affinity always uses every
	// training row.
	Search graph.KNNMethod
	// Probes is the leaves the approximate search scans before it walks
	// the training graph from the nearest rows found; DefaultProbes if 0.
	// Tune raises them until the search reaches a recall target.
	Probes int
	// Workers is the number of goroutines; 1 if 0. It does not change the
	// result.
	Workers int
}

// resolve returns the search that runs and the probes, cut to the leaves.
func (m *Model) resolve(opt Options) (graph.KNNMethod, int) {
	search := opt.Search.Resolve(m.meta.N)
	if m.meta.Affinity == Gaussian {
		search = graph.Exact
	}
	probes := opt.Probes
	if probes <= 0 {
		probes = DefaultProbes
	}
	return search, min(probes, m.meta.Leaves())
}

// Search returns the search Predict runs with opt.
func (m *Model) Search(opt Options) graph.KNNMethod {
	s, _ := m.resolve(opt)
	return s
}

// Predict writes to w (rows×k, row-major) the memberships of the rows of
// x (rows×p, row-major, the model's feature columns in order, as read,
// before standardization): for each row, with p_x its affinity to the
// training rows, the point of the simplex that minimizes ‖p_x - W w‖², which
// is wᵀ(WᵀW)w - 2 (Wᵀp_x)ᵀw + ‖p_x‖², found exactly by Simplex.
//
// For the kNN affinity, p_x is the row the training graph would have given
// x: with N(x) its M nearest training rows (ties to the lower row), and
// x in the reach of training row j if it is nearer than j's M-th
// neighbour (or at that distance and equal to a row of j's list there,
// which won the tie, see tiedIn), p_xj = c·w_xj·([j ∈ N(x)] + [x in j's
// reach])/2, where c is
// the model's scale and w_xj = exp(-d²/(σ_x σ_j)) (self-tuning; σ_x the
// distance to the list's entry 7, floored as the training rows') or 1.
// A training row gets back its row of P, and so, at the solve's optimum,
// its row of W. The cost of a row is O(n·p) for the exact search and
// O((leaves + Probes·Leaf)·p) for the approximate one, plus O(M·k + k³).
// For the Gaussian affinity p_xj = exp(-γ‖x - x_j‖²) over every training
// row: O(n·(p + k)) a row.
func (m *Model) Predict(ctx context.Context, x []float64, rows int, w []float64, opt Options) error {
	p, k := m.meta.P, m.meta.K
	if rows < 0 || len(x) != rows*p || len(w) != rows*k {
		return fmt.Errorf("model: predicting %d values as %d rows of %d features into %d values", len(x), rows, p, len(w))
	}
	return m.eachRow(ctx, rows, opt.Workers, func(r int, sc *rowScratch) error {
		if err := m.predictRow(x[r*p:(r+1)*p], w[r*k:(r+1)*k], sc, opt); err != nil {
			return &RowError{Row: r, Err: err}
		}
		return nil
	})
}

// eachRow calls do for each of rows rows, in chunks of 64 on workers
// goroutines (1 if 0), each with its own scratch.
func (m *Model) eachRow(ctx context.Context, rows, workers int, do func(r int, sc *rowScratch) error) error {
	workers = max(workers, 1)
	const chunk = 64
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	scratch := make(chan *rowScratch, workers)
	for range workers {
		scratch <- m.newScratch()
	}
	for lo := 0; lo < rows; lo += chunk {
		hi := min(rows, lo+chunk)
		g.Go(fault.Guard(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			sc := <-scratch
			defer func() { scratch <- sc }()
			for r := lo; r < hi; r++ {
				if err := do(r, sc); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	return g.Wait()
}

// RowError is the failure of Predict on a row: Row is its index in x.
type RowError struct {
	Row int
	Err error
}

func (e *RowError) Error() string { return fmt.Sprintf("row %d: %v", e.Row, e.Err) }
func (e *RowError) Unwrap() error { return e.Err }

// rowScratch is one goroutine's working memory.
type rowScratch struct {
	x    []float64 // the row, standardized
	list nearest
	rev  []cand // training rows in whose reach the row is
	b    []float64
	lf   []cand // leaves by centroid distance
	// seen and done stamp the training rows scanned and expanded in the
	// current approximate search (stamp); made on its first use.
	seen, done []uint32
	stamp      uint32
	s          SimplexScratch
}

// cand is a training row (or leaf) and its squared distance.
type cand struct {
	d float64
	j int32
}

func (m *Model) newScratch() *rowScratch {
	return &rowScratch{x: make([]float64, m.meta.P), b: make([]float64, m.meta.K),
		list: newNearest(min(max(m.meta.Neighbors, 1), m.meta.N))}
}

// standardize writes the row x as the training rows were standardized,
// refusing a value that is not finite, or is so far out of the training
// rows' range, standardized, that its squared distances to them could
// overflow (above tile.MaxFeature, the bound the solve puts on raw
// features; the training rows are within it).
func (m *Model) standardize(dst, x []float64) error {
	if m.meta.Standardize {
		tile.StandardizeRow(dst, x, m.a.Mean, m.a.Std)
	} else {
		copy(dst, x)
	}
	limit := tile.MaxFeature(m.meta.P)
	for q, v := range dst {
		if !(math.Abs(v) <= limit) || math.IsNaN(x[q]) || math.IsInf(x[q], 0) {
			return &ValueError{Feature: q, Name: m.meta.Features[q], Value: x[q], Scaled: v, Limit: limit, Standardized: m.meta.Standardize}
		}
	}
	return nil
}

// ValueError is a value of a new row that Predict refuses: not finite,
// or, standardized as the training rows were, farther from zero than
// Limit, where squared distances of the model's features overflow a
// float64 (a value far out of the training rows' range).
type ValueError struct {
	Feature      int     // the column, in the model's order
	Name         string  // its name (the model's, unless the caller renames it)
	Value        float64 // as given
	Scaled       float64 // standardized (or as given, for a model without standardization)
	Limit        float64 // the largest |Scaled| Predict takes: tile.MaxFeature
	Standardized bool    // whether the model standardizes its features
}

func (e *ValueError) Error() string {
	switch {
	case math.IsNaN(e.Value) || math.IsInf(e.Value, 0):
		return fmt.Sprintf("column %q: %v is not a finite number", e.Name, e.Value)
	case e.Standardized:
		return fmt.Sprintf("column %q: %g is %.3g standardized by the training rows' mean and deviation, beyond %.3g, where squared distances overflow: the value is far out of the training range; rescale the column as the training rows were",
			e.Name, e.Value, e.Scaled, e.Limit)
	}
	return fmt.Sprintf("column %q: %g with the model's -standardize=false: squared distances overflow above |x| = %.3g; rescale the column as the training rows were",
		e.Name, e.Value, e.Limit)
}

func (m *Model) predictRow(x, w []float64, sc *rowScratch, opt Options) error {
	if err := m.standardize(sc.x, x); err != nil {
		return err
	}
	clear(sc.b)
	if m.meta.Affinity == Gaussian {
		m.gaussianRow(sc)
	} else {
		search, probes := m.resolve(opt)
		m.neighbours(sc, search, probes)
		m.knnRow(sc)
	}
	return Simplex(m.a.Gram, sc.b, m.meta.K, w, &sc.s)
}

// gaussianRow accumulates Wᵀp_x for the Gaussian kernel row of sc.x.
func (m *Model) gaussianRow(sc *rowScratch) {
	p, k, gamma := m.meta.P, m.meta.K, m.meta.Gamma
	for j := range m.meta.N {
		v := negexp.Of(gamma * tile.SqDist(sc.x, m.a.Features[j*p:(j+1)*p]))
		if v == 0 {
			continue
		}
		for c, wj := range m.a.W[j*k : (j+1)*k] {
			sc.b[c] += float64(v * wj)
		}
	}
}

// knnRow accumulates Wᵀp_x from the neighbours found: half an edge for
// each of x's own neighbours and half for each training row whose reach
// x is in.
func (m *Model) knnRow(sc *rowScratch) {
	k := m.meta.K
	sigmaX := 1.0
	self := m.meta.Weights == "self-tuning"
	if self {
		e := min(graph.SigmaNeighbor, sc.list.cnt-1)
		sigmaX = max(math.Sqrt(max(sc.list.d[e], 0)), m.meta.SigmaFloor)
	}
	add := func(d float64, j int32) {
		v := m.meta.Scale / 2
		if self {
			v *= negexp.Of(max(d, 0) / (sigmaX * m.a.Sigma[j]))
		}
		for c, wj := range m.a.W[int(j)*k : int(j+1)*k] {
			sc.b[c] += float64(v * wj)
		}
	}
	for e := range sc.list.cnt {
		add(sc.list.d[e], sc.list.j[e])
	}
	for _, r := range sc.rev {
		add(r.d, r.j)
	}
}
