package graph

import (
	"context"
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

// recallSample holds the exact neighbour lists of a seeded sample of rows,
// against which an approximate search measures its recall.
type recallSample struct {
	rows  []int32 // ascending
	exact *best   // by sample row
}

// newRecallSample draws s rows with seed and finds their exact m nearest
// rows by one scan of x, O(s·n·p), on workers goroutines in fixed chunks
// (the lists do not depend on the workers).
func newRecallSample(ctx context.Context, x []float64, n, p, m, s int, seed uint64, workers int, kernel tile.ISA) (*recallSample, error) {
	rs := &recallSample{}
	if s == 0 {
		return rs, nil
	}
	for _, i := range sample.Rows(rand.New(rand.NewPCG(seed, 0x7ecA11)), n, s) {
		rs.rows = append(rs.rows, int32(i))
	}
	slices.Sort(rs.rows)
	rs.exact = newBest(s, m)
	for r, i := range rs.rows {
		rs.exact.offer(r, -1, i)
	}
	// The scan screens tiles of the sample's rows (block 0 of a matrix
	// of blocks of s rows) against a run of recallScanBlocks blocks of x,
	// with the kernel of tile.Pairs; a task's candidates are committed in
	// task order, and its thresholds start at the committed bounds.
	z := make([]float64, s*p)
	for r, i := range rs.rows {
		copy(z[r*p:(r+1)*p], x[int(i)*p:int(i+1)*p])
	}
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
	err := ordered.Run(ctx, workers, (n+span-1)/span,
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
			rows := s + hi - t.lo
			pairs, err := tile.NewPairs(t.z, rows, p, s, kernel)
			if err != nil {
				return err
			}
			sc := pairs.NewScratch()
			for r := range s {
				t.rowMax[r] = math.Float64frombits(bound[r].Load())
			}
			for J := 1; J < pairs.Blocks(); J++ {
				pairs.Near(sc, 0, J, t.rowMax, t.colMax, func(r, j int, d float64) {
					if j += t.lo - s; j != int(rs.rows[r]) && d <= t.rowMax[r] && t.b.offer(r, d, int32(j)) {
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

// recall returns the recall@m of lists (by row) on the sample: the share
// of the exact lists' entries matched, an entry of a row's list counting
// as a match if it is no farther than the exact list's last, so that ties
// (duplicated rows) count whichever of the tied rows a list holds. It is
// NaN without a sample.
func (rs *recallSample) recall(lists *best) float64 {
	if len(rs.rows) == 0 {
		return math.NaN()
	}
	m := rs.exact.m
	var hit, all int
	for r, i := range rs.rows {
		c := int(rs.exact.cnt[r])
		last := rs.exact.d[r*m+c-1]
		got := 0
		for e := range int(lists.cnt[i]) {
			if lists.d[int(i)*m+e] <= last {
				got++
			}
		}
		hit += min(got, c)
		all += c
	}
	return float64(hit) / float64(all)
}
