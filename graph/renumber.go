package graph

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"

	"github.com/ssnmf/ssnmf/store"
)

// Renumber returns the graph m with its rows and columns renumbered by
// order: row q of m, and column q, become row and column order[q], as a
// graph built on the rows of Partition is put back into the input's
// numbering. It is assembled in the CSR file path (see OpenFile), tagged
// source, or in memory if path is empty. It stops with ctx's error once
// ctx is done.
//
// Into a file, the rows are written in order, a run of them at a time
// (renumberRuns), so that no page of the file is dirtied twice. Filling
// each row in its place in m's order dirtied the file's pages at random:
// with less page cache than the file, the kernel wrote them back and read
// them again over and over (the 166 MB graph of 300,000 rows in a 100 MB
// cgroup: hundreds of GB read).
func (m *CSR) Renumber(ctx context.Context, order []int32, path string, source uint64) (*CSR, error) {
	return m.renumber(ctx, order, path, source, renumberRunBytes)
}

// renumber is Renumber with runs of at most runBytes.
func (m *CSR) renumber(ctx context.Context, order []int32, path string, source uint64, runBytes int) (*CSR, error) {
	n := m.N()
	if len(order) != n {
		return nil, fmt.Errorf("graph: an order of %d rows for a graph of %d", len(order), n)
	}
	count := make([]int64, n)
	for q, i := range order {
		if i < 0 || int(i) >= n || count[i] != 0 {
			return nil, fmt.Errorf("graph: order[%d] = %d is not a permutation of %d rows", q, i, n)
		}
		count[i] = m.RowPtr[q+1] - m.RowPtr[q]
		if count[i] == 0 {
			count[i] = -1 // seen; an empty row
		}
	}
	for i := range count {
		count[i] = max(count[i], 0)
	}
	es, err := newEntries(count, path, source, m.Workers)
	if err != nil {
		return nil, err
	}
	if path != "" {
		if err := m.renumberRuns(ctx, order, es, filepath.Dir(path), runBytes); err != nil {
			es.abort()
			return nil, err
		}
		return es.sorted()
	}
	for q, i := range order {
		if q%renumberCheck == 0 && ctx.Err() != nil {
			es.abort()
			return nil, context.Cause(ctx)
		}
		for e := m.RowPtr[q]; e < m.RowPtr[q+1]; e++ {
			es.put(int(i), order[m.Col[e]], m.Val[e])
		}
	}
	return es.csr(1, func(i int, c int32, _, _ float64) (float64, error) {
		return 0, fmt.Errorf("graph: column %d twice in row %d", c, i)
	})
}

// renumberCheck is the rows Renumber moves between looks at its context.
const renumberCheck = 1 << 14

// renumberRunBytes bounds the entries of the renumbered graph that
// renumberRuns assembles in memory at a time (32 MiB, 12 bytes an entry),
// and renumberScans the runs it makes from scans of m.
const (
	renumberRunBytes = 32 << 20
	renumberScans    = 4
)

// renumberRuns fills es, whose rows are m's renumbered by order, a run of
// consecutive rows at a time: the run's entries are put in place in
// anonymous memory of at most runBytes (or one row's, if larger), each
// row sorted by column, and copied into es in order. Up to renumberScans
// runs, each is gathered by a scan of m; beyond, one scan of m writes each
// row, renumbered, to a file in dir for its run (removed before it
// returns), from which the runs are then assembled one by one, so that m
// is read once and the entries are written and read once more, whatever
// the number of runs.
func (m *CSR) renumberRuns(ctx context.Context, order []int32, es *entries, dir string, runBytes int) error {
	n := len(order)
	first := []int{0} // by run, its first row; then n
	most := int64(0)
	for i := 0; i < n; {
		j := i + 1
		for j < n && es.rowPtr[j+1]-es.rowPtr[i] <= int64(max(1, runBytes/12)) {
			j++
		}
		most = max(most, es.rowPtr[j]-es.rowPtr[i])
		first = append(first, j)
		i = j
	}
	if n == 0 {
		return nil
	}
	size := int(12*most) + 8
	sc, err := store.NewScratchSpace("", int64(size)).New(size) // anonymous memory, outside the heap
	if err != nil {
		return fmt.Errorf("graph: renumber: %w", err)
	}
	defer sc.Release()
	run := &renumberRun{es: es, order: order}
	off := 0
	run.val = store.Carve[float64](sc, &off, int(most))
	run.col = store.Carve[int32](sc, &off, int(most))
	if len(first)-1 <= renumberScans {
		for r := range len(first) - 1 {
			run.start(first[r], first[r+1])
			for q, i := range order {
				if q%renumberCheck == 0 && ctx.Err() != nil {
					return context.Cause(ctx)
				}
				if int(i) >= run.lo && int(i) < run.hi {
					run.put(i, m.Col[m.RowPtr[q]:m.RowPtr[q+1]], m.Val[m.RowPtr[q]:m.RowPtr[q+1]])
				}
			}
			run.finish()
		}
		return nil
	}
	files, err := m.distribute(ctx, order, first, dir)
	if err != nil {
		return err
	}
	defer files.Close()
	for r := range len(first) - 1 {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		run.start(first[r], first[r+1])
		if err := run.read(files.Reader(r)); err != nil {
			return err
		}
		run.finish()
	}
	return nil
}

// renumberRun is the run of rows [lo, hi) of a renumbered graph being
// assembled in col and val.
type renumberRun struct {
	es     *entries
	order  []int32
	lo, hi int
	col    []int32
	val    []float64
	row    []entry // a row being sorted
}

// start begins the run of rows [lo, hi).
func (r *renumberRun) start(lo, hi int) { r.lo, r.hi = lo, hi }

// put places row i's entries, their columns renumbered by order.
func (r *renumberRun) put(i int32, col []int32, val []float64) {
	k := r.es.rowPtr[i] - r.es.rowPtr[r.lo]
	for e, c := range col {
		r.col[k+int64(e)], r.val[k+int64(e)] = r.order[c], val[e]
	}
}

// finish sorts each row of the run by column and copies the run into es.
func (r *renumberRun) finish() {
	base, end := r.es.rowPtr[r.lo], r.es.rowPtr[r.hi]
	for i := r.lo; i < r.hi; i++ {
		lo, hi := r.es.rowPtr[i]-base, r.es.rowPtr[i+1]-base
		r.row = r.row[:0]
		for k := lo; k < hi; k++ {
			r.row = append(r.row, entry{c: r.col[k], v: r.val[k]})
		}
		slices.SortFunc(r.row, func(a, b entry) int { return cmp.Compare(a.c, b.c) })
		for q, en := range r.row {
			r.col[lo+int64(q)], r.val[lo+int64(q)] = en.c, en.v
		}
	}
	copy(r.es.col[base:end], r.col[:end-base])
	copy(r.es.val[base:end], r.val[:end-base])
}

// distribute scans m in order and appends each row, renumbered, to the
// file of its run (runs begin at the rows first, then n), in new run files
// in dir, returned rewound: the row's new index and its count (uint32,
// little-endian), then each entry's column (int32) and value (float64
// bits).
func (m *CSR) distribute(ctx context.Context, order []int32, first []int, dir string) (*store.RunFiles, error) {
	runs, err := store.NewRunFiles(dir, len(first)-1, renumberRunBytes)
	if err != nil {
		return nil, fmt.Errorf("graph: renumber: %w", err)
	}
	var b []byte
	for q, i := range order {
		if q%renumberCheck == 0 && ctx.Err() != nil {
			runs.Close()
			return nil, context.Cause(ctx)
		}
		r, found := slices.BinarySearch(first, int(i))
		if !found {
			r--
		}
		b = binary.LittleEndian.AppendUint32(b[:0], uint32(i))
		b = binary.LittleEndian.AppendUint32(b, uint32(m.RowPtr[q+1]-m.RowPtr[q]))
		for e := m.RowPtr[q]; e < m.RowPtr[q+1]; e++ {
			b = binary.LittleEndian.AppendUint32(b, uint32(order[m.Col[e]]))
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(m.Val[e]))
		}
		if err := runs.Append(r, b); err != nil {
			runs.Close()
			return nil, fmt.Errorf("graph: renumber: %w", err)
		}
	}
	if err := runs.Rewind(); err != nil {
		runs.Close()
		return nil, fmt.Errorf("graph: renumber: %w", err)
	}
	return runs, nil
}

// read places the rows of the run from in, its file named name, as
// distribute wrote it.
func (r *renumberRun) read(br io.Reader, name string) error {
	var head [8]byte
	var b []byte
	for range r.hi - r.lo {
		if _, err := io.ReadFull(br, head[:]); err != nil {
			return fmt.Errorf("graph: renumber: reading back %s: %w", name, err)
		}
		i, cnt := binary.LittleEndian.Uint32(head[:]), int64(binary.LittleEndian.Uint32(head[4:]))
		if int(i) < r.lo || int(i) >= r.hi || cnt != r.es.rowPtr[i+1]-r.es.rowPtr[i] {
			return fmt.Errorf("graph: renumber: %s holds row %d of %d entries, not of its run [%d, %d)", name, i, cnt, r.lo, r.hi)
		}
		b = slices.Grow(b[:0], int(12*cnt))[:12*cnt]
		if _, err := io.ReadFull(br, b); err != nil {
			return fmt.Errorf("graph: renumber: reading back %s: %w", name, err)
		}
		k := r.es.rowPtr[i] - r.es.rowPtr[r.lo] // renumbered by distribute: set in place
		for e := range cnt {
			r.col[k+e] = int32(binary.LittleEndian.Uint32(b[12*e:]))
			r.val[k+e] = math.Float64frombits(binary.LittleEndian.Uint64(b[12*e+4:]))
		}
	}
	return nil
}
