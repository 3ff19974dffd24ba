package graph

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"

	"github.com/ssnmf/ssnmf/internal/ordered"
	"github.com/ssnmf/ssnmf/internal/sample"
	"github.com/ssnmf/ssnmf/tile"
)

// recallBudget bounds the distances the recall sample costs by default,
// rows·n: a thousand rows up to n = 2·10⁶, fewer above, never under
// minRecallRows.
const (
	recallBudget     = 2e9
	maxRecallRows    = 1000
	minRecallRows    = 100
	recallScanBlocks = 16 // the blocks of s rows of a task of the scan
)

// sampleRows returns the number of rows of the recall sample for n rows.
func (opt KNNOptions) sampleRows(n int) int {
	switch {
	case opt.Sample < 0:
		return 0
	case opt.Sample > 0:
		return min(opt.Sample, n)
	}
	return min(n, max(minRecallRows, min(maxRecallRows, int(recallBudget/float64(n)))))
}

// RecallSample holds the exact neighbour lists of a seeded sample of rows
// against the rows of a matrix x, against which an approximate search
// measures its recall@m: a sample of x's own rows (the graph's search, a
// row's list holding itself first) or of query rows searched against x
// (the search of a model's new rows, model.Predict).
type RecallSample struct {
	rows  []int32 // ascending
	exact *best   // by sample row
}

// SampleRows returns s of n rows drawn with seed, ascending: the rows of a
// recall sample, for the graph's search and for a model's new rows.
func SampleRows(n, s int, seed uint64) []int32 {
	rows := make([]int32, 0, s)
	for _, i := range sample.Rows(rand.New(rand.NewPCG(seed, 0x7ecA11)), n, s) {
		rows = append(rows, int32(i))
	}
	slices.Sort(rows)
	return rows
}

// newRecallSample draws s rows of x with seed and finds their exact m
// nearest rows by one scan of x, O(s·n·p), on workers goroutines in fixed
// chunks (the lists do not depend on the workers).
func newRecallSample(ctx context.Context, x []float64, n, p, m, s int, seed uint64, workers int, kernel tile.ISA) (*RecallSample, error) {
	if s == 0 {
		return &RecallSample{}, nil
	}
	rows := SampleRows(n, s, seed)
	z := make([]float64, s*p)
	for r, i := range rows {
		copy(z[r*p:(r+1)*p], x[int(i)*p:int(i+1)*p])
	}
	return exactSample(ctx, z, rows, true, x, n, p, m, workers, kernel)
}

// NewQueryRecall returns the recall sample of query rows: q (len(rows)×p,
// row-major) holds the rows sampled, numbered rows (ascending, as
// SampleRows gives them), and their exact lists are their m nearest rows
// of x (n×p), found by one scan of x as the graph's own sample is, with
// the same bits for any workers. kernel screens the pairs (tile.Pairs).
func NewQueryRecall(ctx context.Context, q []float64, rows []int32, x []float64, n, p, m, workers int, kernel tile.ISA) (*RecallSample, error) {
	if len(q) != len(rows)*p || len(x) != n*p || m < 1 {
		return nil, fmt.Errorf("graph: recall sample of %d values as %d rows of %d features against %d values as %d rows, %d neighbours", len(q), len(rows), p, len(x), n, m)
	}
	if len(rows) == 0 {
		return &RecallSample{}, nil
	}
	return exactSample(ctx, q, rows, false, x, n, p, m, workers, kernel)
}

// exactSample finds the exact m nearest rows of x of the sample's rows z
// (len(rows)×p). With self, z's rows are x's rows of the same numbers:
// each list holds its row first and the m-1 nearest others.
func exactSample(ctx context.Context, z []float64, rows []int32, self bool, x []float64, n, p, m, workers int, kernel tile.ISA) (*RecallSample, error) {
	s := len(rows)
	rs := &RecallSample{rows: rows, exact: newBest(s, m)}
	if self {
		for r, i := range rs.rows {
			rs.exact.offer(r, -1, i)
		}
	}
	// The scan screens tiles of the sample's rows (block 0 of a matrix
	// of blocks of s rows) against a run of recallScanBlocks blocks of x,
	// with the kernel of tile.Pairs; a task's candidates are committed in
	// task order, and its thresholds start at the committed bounds.
	bound := make([]atomic.Uint64, s)
	for r := range bound {
		bound[r].Store(math.Float64bits(math.Inf(1)))
	}
	span := recallScanBlocks * s
	type scanTask struct {
		b      *best
		z      []float64
		rowMax []float64
		colMax []float64
		lo     int
	}
	err := ordered.Run(ctx, max(workers, 1), (n+span-1)/span,
		func() *scanTask {
			t := &scanTask{b: newBest(s, m), z: make([]float64, 0, s*p+span*p), rowMax: make([]float64, s), colMax: make([]float64, s)}
			for j := range t.colMax {
				t.colMax[j] = math.Inf(-1)
			}
			return t
		},
		func(ctx context.Context, task int, t *scanTask) error {
			t.b.reset(s)
			t.lo = task * span
			hi := min(n, t.lo+span)
			t.z = append(append(t.z[:0], z...), x[t.lo*p:hi*p]...)
			pairs, err := tile.NewPairs(t.z, s+hi-t.lo, p, s, kernel)
			if err != nil {
				return err
			}
			sc := pairs.NewScratch()
			for r := range s {
				t.rowMax[r] = math.Float64frombits(bound[r].Load())
			}
			for J := 1; J < pairs.Blocks(); J++ {
				pairs.Near(sc, 0, J, t.rowMax, t.colMax, func(r, j int, d float64) {
					if j += t.lo - s; !(self && int32(j) == rs.rows[r]) && d <= t.rowMax[r] && t.b.offer(r, d, int32(j)) {
						t.rowMax[r] = min(t.rowMax[r], t.b.bound(r))
					}
				})
			}
			return nil
		},
		func(_ int, t *scanTask) error {
			for r := range s {
				rs.exact.merge(r, t.b, r)
				bound[r].Store(math.Float64bits(rs.exact.bound(r)))
			}
			return nil
		})
	return rs, err
}

// Rows returns the sampled rows, ascending.
func (rs *RecallSample) Rows() []int32 { return rs.rows }

// Recall returns the recall@m of the lists that got gives the sample's
// rows (got(r): the squared distances of the list of the r-th sampled
// row, in any order): the share of the exact lists' entries matched, an
// entry counting as a match if it is no farther than the exact list's
// last, so that ties (duplicated rows) count whichever of the tied rows a
// list holds. It is NaN without a sample.
func (rs *RecallSample) Recall(got func(r int) []float64) float64 {
	if len(rs.rows) == 0 {
		return math.NaN()
	}
	m := rs.exact.m
	var hit, all int
	for r := range rs.rows {
		c := int(rs.exact.cnt[r])
		last := rs.exact.d[r*m+c-1]
		match := 0
		for _, d := range got(r) {
			if d <= last {
				match++
			}
		}
		hit += min(match, c)
		all += c
	}
	return float64(hit) / float64(all)
}

// recall returns the recall@m of the graph's lists (by row) on the
// sample (Recall).
func (rs *RecallSample) recall(lists *best) float64 {
	m := lists.m
	return rs.Recall(func(r int) []float64 {
		i := int(rs.rows[r])
		return lists.d[i*m : i*m+int(lists.cnt[i])]
	})
}
