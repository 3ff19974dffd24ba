package graph

import (
	"cmp"
	"slices"
)

// entries gathers the entries of a CSR row by row, in any order within a
// row, each optionally with a tag saying where it came from, and assembles
// the matrix: the one construction of the kNN graph and of edge lists.
type entries struct {
	rowPtr []int64
	col    []int32
	val    []float64
	tag    []int64 // nil if the entries are not tagged
	next   []int64 // where row i's next entry goes
}

// newEntries returns room for count[i] entries in row i.
func newEntries(count []int64, tagged bool) *entries {
	n := len(count)
	e := &entries{rowPtr: make([]int64, n+1)}
	for i, c := range count {
		e.rowPtr[i+1] = e.rowPtr[i] + c
	}
	e.col = make([]int32, e.rowPtr[n])
	e.val = make([]float64, e.rowPtr[n])
	if tagged {
		e.tag = make([]int64, e.rowPtr[n])
	}
	e.next = slices.Clone(e.rowPtr[:n])
	return e
}

// put places the entry (i, j) = v with its tag.
func (e *entries) put(i int, j int32, v float64, tag int64) {
	k := e.next[i]
	e.col[k], e.val[k] = j, v
	if e.tag != nil {
		e.tag[k] = tag
	}
	e.next[i]++
}

// entry is an entry of a row being sorted.
type entry struct {
	c   int32
	v   float64
	tag int64
}

// csr sorts every row by column, then tag, and where a column repeats has
// merge make one value of the two entries (or refuse them). It returns the
// compacted matrix, checked by NewCSR.
func (e *entries) csr(merge func(i int, a, b entry) (float64, error)) (*CSR, error) {
	n := len(e.rowPtr) - 1
	var row []entry
	out := int64(0)
	for i := range n {
		row = row[:0]
		for k := e.rowPtr[i]; k < e.rowPtr[i+1]; k++ {
			en := entry{c: e.col[k], v: e.val[k]}
			if e.tag != nil {
				en.tag = e.tag[k]
			}
			row = append(row, en)
		}
		slices.SortStableFunc(row, func(a, b entry) int { return cmp.Or(cmp.Compare(a.c, b.c), cmp.Compare(a.tag, b.tag)) })
		e.rowPtr[i] = out
		for q, en := range row {
			if q > 0 && en.c == e.col[out-1] {
				v, err := merge(i, row[q-1], en)
				if err != nil {
					return nil, err
				}
				e.val[out-1] = v
				continue
			}
			e.col[out], e.val[out] = en.c, en.v
			out++
		}
	}
	e.rowPtr[n] = out
	return NewCSR(e.rowPtr, e.col[:out:out], e.val[:out:out])
}
