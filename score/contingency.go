package score

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// indexer maps arbitrary non-negative labels to dense indices 0..count-1 in
// order of first appearance, and records how many points carry each label.
type indexer struct {
	bySlice []int       // label -> index, -1 if absent; nil when byMap is used
	byMap   map[int]int // label -> index, for large or sparse label values
	counts  []int       // counts[index] = number of points with that label
}

// newIndexer validates labels and builds their dense relabeling. Small label
// values are looked up in a slice; large ones fall back to a map, so memory
// stays O(n) whatever the label values are.
func newIndexer(labels []int, name string) (*indexer, error) {
	maxLabel := 0
	for i, l := range labels {
		if l < 0 {
			return nil, fmt.Errorf("score: negative label %d at %s[%d]", l, name, i)
		}
		maxLabel = max(maxLabel, l)
	}
	ix := &indexer{}
	if maxLabel <= 4*len(labels)+1024 {
		ix.bySlice = make([]int, maxLabel+1)
		for i := range ix.bySlice {
			ix.bySlice[i] = -1
		}
		for _, l := range labels {
			d := ix.bySlice[l]
			if d < 0 {
				d = len(ix.counts)
				ix.bySlice[l] = d
				ix.counts = append(ix.counts, 0)
			}
			ix.counts[d]++
		}
		return ix, nil
	}
	ix.byMap = make(map[int]int)
	for _, l := range labels {
		d, ok := ix.byMap[l]
		if !ok {
			d = len(ix.counts)
			ix.byMap[l] = d
			ix.counts = append(ix.counts, 0)
		}
		ix.counts[d]++
	}
	return ix, nil
}

// index returns the dense index of label l, which must have been seen.
func (ix *indexer) index(l int) int {
	if ix.bySlice != nil {
		return ix.bySlice[l]
	}
	return ix.byMap[l]
}

// cell addresses one entry of a sparse contingency table.
type cell struct{ i, j int }

// contingency is the table of counts n_ij of points in class i and cluster j.
type contingency struct {
	n      int   // number of points
	rows   int   // number of classes
	cols   int   // number of clusters
	rowSum []int // class sizes
	colSum []int // cluster sizes
	dense  []int // rows*cols counts in row-major order; nil when sparse
	sparse map[cell]int
}

// defaultMaxDense returns the largest table, in cells, that is stored densely
// for n points. Beyond it (for instance when nearly every point is its own
// cluster) only the at most n non-zero cells are stored.
func defaultMaxDense(n int) int {
	return 1<<20 + 4*n
}

// newContingency validates its arguments and builds the contingency table of
// truth (rows) against pred (columns) in one pass over the points. The table
// is dense when it has at most maxDense cells and sparse otherwise.
func newContingency(truth, pred []int, maxDense int) (*contingency, error) {
	if len(truth) != len(pred) {
		return nil, fmt.Errorf("score: length mismatch: truth has %d labels, pred has %d", len(truth), len(pred))
	}
	if len(truth) == 0 {
		return nil, fmt.Errorf("score: empty input")
	}
	ti, err := newIndexer(truth, "truth")
	if err != nil {
		return nil, err
	}
	pi, err := newIndexer(pred, "pred")
	if err != nil {
		return nil, err
	}
	t := &contingency{
		n:      len(truth),
		rows:   len(ti.counts),
		cols:   len(pi.counts),
		rowSum: ti.counts,
		colSum: pi.counts,
	}
	if t.rows <= maxDense/t.cols { // t.rows*t.cols <= maxDense, without overflow
		t.dense = make([]int, t.rows*t.cols)
		for x, l := range truth {
			t.dense[ti.index(l)*t.cols+pi.index(pred[x])]++
		}
		return t, nil
	}
	t.sparse = make(map[cell]int)
	for x, l := range truth {
		t.sparse[cell{ti.index(l), pi.index(pred[x])}]++
	}
	return t, nil
}

// each calls f for every non-zero cell of the table, in row-major order
// (so that sums over the cells give the same bits every time, dense or
// sparse).
func (t *contingency) each(f func(i, j, nij int)) {
	if t.dense != nil {
		for i := range t.rows {
			row := t.dense[i*t.cols : (i+1)*t.cols]
			for j, nij := range row {
				if nij != 0 {
					f(i, j, nij)
				}
			}
		}
		return
	}
	cells := slices.SortedFunc(maps.Keys(t.sparse), func(a, b cell) int {
		return cmp.Or(cmp.Compare(a.i, b.i), cmp.Compare(a.j, b.j))
	})
	for _, c := range cells {
		f(c.i, c.j, t.sparse[c])
	}
}
