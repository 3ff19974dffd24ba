package graph

import (
	"cmp"
	"context"
	"slices"
)

// entries gathers the entries of a CSR row by row, in any order within a
// row, and assembles the matrix: the one construction of the kNN graph and
// of edge lists. It counts first and fills second, so it holds the entries
// once, in memory or in a memory-mapped CSR file, plus O(n).
type entries struct {
	rowPtr []int64
	col    []int32
	val    []float64
	next   []int64 // where row i's next entry goes
	file   *fileBuilder
}

// newEntries returns room for count[i] entries in row i: in memory if path
// is empty, else in the CSR file path (see OpenFile), tagged source.
func newEntries(count []int64, path string, source uint64, workers int) (*entries, error) {
	n := len(count)
	var total int64
	for _, c := range count {
		total += c
	}
	e := &entries{}
	if path == "" {
		e.rowPtr, e.col, e.val = make([]int64, n+1), make([]int32, total), make([]float64, total)
	} else {
		var err error
		if e.file, e.rowPtr, e.col, e.val, err = createFile(path, n, int(total), source, workers); err != nil {
			return nil, err
		}
	}
	for i, c := range count {
		e.rowPtr[i+1] = e.rowPtr[i] + c
	}
	e.next = slices.Clone(e.rowPtr[:n])
	return e, nil
}

// put places the entry (i, j) = v.
func (e *entries) put(i int, j int32, v float64) {
	k := e.next[i]
	e.col[k], e.val[k] = j, v
	e.next[i]++
}

// abort discards the entries, and their file if any.
func (e *entries) abort() {
	if e.file != nil {
		e.file.abort()
	}
}

// entry is an entry of a row being sorted.
type entry struct {
	c int32
	v float64
}

// csr sorts every row by column, and where a column repeats has merge make
// one value of the two (or refuse them). It returns the compacted matrix,
// checked by NewCSR; a file is cut to its length and mapped read-only. The
// rows are sorted on workers goroutines, each in its own place (the same
// bits for any workers; of several refusals, the first row's is returned),
// then moved together in one pass.
func (e *entries) csr(workers int, merge func(i int, c int32, a, b float64) (float64, error)) (m *CSR, err error) {
	if e.file != nil {
		defer func() {
			if err != nil {
				e.file.abort()
			}
		}()
	}
	n := len(e.rowPtr) - 1
	kept := make([]int64, n) // by row: its entries once merged, at its start
	const chunk = 4096       // rows a task
	errs := make([]error, (n+chunk-1)/chunk)
	err = parallel(context.Background(), workers, len(errs), func(t int) {
		var row []entry
		for i := t * chunk; i < min(n, (t+1)*chunk); i++ {
			if kept[i], errs[t] = e.mergeRow(i, &row, merge); errs[t] != nil {
				return
			}
		}
	})
	if err != nil { // a fault of a mapping (fault.Guard)
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	out := int64(0)
	for i := range n {
		start := e.rowPtr[i]
		copy(e.col[out:], e.col[start:start+kept[i]])
		copy(e.val[out:], e.val[start:start+kept[i]])
		e.rowPtr[i] = out
		out += kept[i]
	}
	e.rowPtr[n] = out
	if e.file != nil {
		return e.file.finish(int(out))
	}
	return NewCSR(e.rowPtr, e.col[:out:out], e.val[:out:out])
}

// sorted returns the matrix of entries put in order, every row's columns
// increasing and each once, checked by NewCSR; a file is finished and
// mapped read-only.
func (e *entries) sorted() (*CSR, error) {
	n := len(e.rowPtr) - 1
	if e.file != nil {
		return e.file.finish(int(e.rowPtr[n]))
	}
	return NewCSR(e.rowPtr, e.col, e.val)
}

// mergeRow sorts row i's entries by column, in buf's memory, and writes
// them back from the row's start, a repeated column merged, and returns
// how many it wrote.
func (e *entries) mergeRow(i int, buf *[]entry, merge func(i int, c int32, a, b float64) (float64, error)) (int64, error) {
	lo, hi := e.rowPtr[i], e.rowPtr[i+1]
	row := (*buf)[:0]
	defer func() { *buf = row }()
	for k := lo; k < hi; k++ {
		row = append(row, entry{c: e.col[k], v: e.val[k]})
	}
	slices.SortFunc(row, func(a, b entry) int { return cmp.Compare(a.c, b.c) })
	out := lo
	for q, en := range row {
		if q > 0 && en.c == e.col[out-1] {
			v, err := merge(i, en.c, e.val[out-1], en.v)
			if err != nil {
				return 0, err
			}
			e.val[out-1] = v
			continue
		}
		e.col[out], e.val[out] = en.c, en.v
		out++
	}
	return out - lo, nil
}
