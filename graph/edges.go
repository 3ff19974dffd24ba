package graph

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ssnmf/ssnmf/store"
)

// An edge list is a table with the columns src and dst, 0-based row ids,
// and optionally weight, in any format package store/input reads. It
// follows the convention of Spark's PowerIterationClustering: each
// unordered pair appears at most once, in either direction, and sets
// P_ij = P_ji = weight (1 without a weight column); a pair not listed is 0.
// Unlike PIC, a self-loop (i, i) sets P_ii; without one, P_ii = 0. A row
// with no edge is allowed (its row of P is 0).
const (
	ColSrc    = "src"
	ColDst    = "dst"
	ColWeight = "weight"
)

// EdgeBatchRows is the number of edges of a record batch that EdgeBatches
// emits.
const EdgeBatchRows = 64 << 10

// MaxImpliedRows is the most rows an edge list may imply by its largest
// id alone, when no number of rows is given, beyond two a listed edge:
// an edge names at most two distinct rows, so a largest id far above
// twice the number of edges makes mostly empty rows, and is more likely a
// stray id than a graph (one edge to row 2·10⁹ would make a CSR of 16 GB).
const MaxImpliedRows = 1 << 16

// EdgeOptions are the settings of FromEdges.
type EdgeOptions struct {
	// Rows is the number of rows; 0 takes it from the largest id, which
	// must then be below max(2·edges, MaxImpliedRows).
	Rows int
	// File, if not empty, is the CSR file the graph is assembled in.
	File string
	// Progress, if not nil, is called with pass "edge list" after each
	// EdgeBatchRows edges of each of the two passes over the edges.
	Progress func(pass string, done, total int)
}

// FromEdges returns the graph of the edge list in tab (its columns src,
// dst and, optionally, weight), named name in errors, for opt.Rows rows,
// or ctx's error once it is canceled.
// It counts each row's entries in one pass over the edges and places them
// in a second, so it holds the CSR, O(n) and no more; with opt.File not
// empty the CSR is assembled in that CSR file, memory-mapped (see
// OpenFile), so that with tab mapped too (see store.TableOptions.MapDir)
// neither the edges nor the graph need fit in memory. Every bad edge is a
// one-line error naming the file, the edge (1 for the first row of data)
// and the column.
func FromEdges(ctx context.Context, name string, tab *store.Table, opt EdgeOptions) (*CSR, error) {
	n := opt.Rows
	cols := map[string]int{}
	for c, s := range tab.Names {
		switch s {
		case ColSrc, ColDst, ColWeight:
			cols[s] = c
		default:
			return nil, fmt.Errorf("%s: column %s of an edge list: want %s, %s and, optionally, %s", name, store.Quote(s), ColSrc, ColDst, ColWeight)
		}
	}
	if _, ok := cols[ColSrc]; !ok || tab.Labels != nil {
		return nil, fmt.Errorf("%s: an edge list needs the columns %s and %s (and no label column)", name, ColSrc, ColDst)
	}
	if _, ok := cols[ColDst]; !ok {
		return nil, fmt.Errorf("%s: an edge list needs the columns %s and %s", name, ColSrc, ColDst)
	}
	if tab.N == 0 {
		return nil, fmt.Errorf("%s: the edge list is empty", name)
	}
	p, x := tab.P, tab.Features
	id := func(r int, col string) (int, error) {
		v := x[r*p+cols[col]]
		if v != math.Trunc(v) || v < 0 || v >= math.MaxInt32 || n > 0 && v >= float64(n) {
			want := "a whole number >= 0"
			if n > 0 {
				want = fmt.Sprintf("a row id in [0, %d)", n)
			}
			return 0, fmt.Errorf("%s: edge %d: column %s: %v, want %s", name, r+1, col, v, want)
		}
		return int(v), nil
	}
	weight := func(r int) (float64, error) {
		c, ok := cols[ColWeight]
		if !ok {
			return 1, nil
		}
		if v := x[r*p+c]; v >= 0 && !math.IsInf(v, 0) {
			return v, nil
		}
		return 0, fmt.Errorf("%s: edge %d: column %s: %v, want a finite weight >= 0", name, r+1, ColWeight, x[r*p+c])
	}
	chunks := (tab.N + EdgeBatchRows - 1) / EdgeBatchRows
	// progress reports the edges up to r of pass 0 or 1 done, and whether
	// ctx is canceled, every EdgeBatchRows edges.
	progress := func(r, pass int) error {
		if (r+1)%EdgeBatchRows != 0 && r != tab.N-1 {
			return nil
		}
		if opt.Progress != nil {
			opt.Progress("edge list", pass*chunks+r/EdgeBatchRows+1, 2*chunks)
		}
		return ctx.Err()
	}
	// Pass 1: check every edge, and find the largest id.
	top := -1
	for r := range tab.N {
		s, err := id(r, ColSrc)
		if err != nil {
			return nil, err
		}
		d, err := id(r, ColDst)
		if err != nil {
			return nil, err
		}
		if _, err := weight(r); err != nil {
			return nil, err
		}
		top = max(top, s, d)
		if err := progress(r, 0); err != nil {
			return nil, err
		}
	}
	if n == 0 {
		n = top + 1
		if limit := max(2*tab.N, MaxImpliedRows); n > limit {
			return nil, fmt.Errorf("%s: the largest id %d makes %d rows, but %d edges name at most %d distinct rows: give the number of rows (-rows %d, or the INPUT the edges were made from) if the rows without an edge are meant",
				name, top, n, tab.N, 2*tab.N, n)
		}
	}
	count := make([]int64, n)
	for r := range tab.N {
		s, _ := id(r, ColSrc)
		d, _ := id(r, ColDst)
		count[s]++
		if d != s {
			count[d]++
		}
	}
	// Pass 2: place the entries; a column twice in a row is a pair listed
	// twice, whose edges a third pass finds for the error.
	es, err := newEntries(count, opt.File, 0, 1)
	if err != nil {
		return nil, err
	}
	for r := range tab.N {
		s, _ := id(r, ColSrc)
		d, _ := id(r, ColDst)
		v, _ := weight(r)
		es.put(s, int32(d), v)
		if d != s {
			es.put(d, int32(s), v)
		}
		if err := progress(r, 1); err != nil {
			es.abort()
			return nil, err
		}
	}
	return es.csr(1, func(i int, c int32, _, _ float64) (float64, error) {
		lo, hi := min(i, int(c)), max(i, int(c))
		var at [2]int // the two first edges of the pair, counted from 1
		for r, found := 0, 0; r < tab.N && found < len(at); r++ {
			s, _ := id(r, ColSrc)
			d, _ := id(r, ColDst)
			if min(s, d) == lo && max(s, d) == hi {
				at[found] = r + 1
				found++
			}
		}
		return 0, fmt.Errorf("%s: edges %d and %d: the pair (%d, %d) is listed twice (each unordered pair at most once, in either direction)",
			name, at[0], at[1], lo, hi)
	})
}

// EdgeSchema is the schema of the edge lists that EdgeBatches writes: src
// and dst (int64) and weight (float64), none nullable.
func EdgeSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: ColSrc, Type: arrow.PrimitiveTypes.Int64},
		{Name: ColDst, Type: arrow.PrimitiveTypes.Int64},
		{Name: ColWeight, Type: arrow.PrimitiveTypes.Float64},
	}, nil)
}

// EdgeBatches passes the edge list of m to emit in record batches of up to
// EdgeBatchRows edges: every stored pair once, as (i, j) with i <= j, in
// row order. Read back by FromEdges it gives m to the bit.
func (m *CSR) EdgeBatches(emit func(arrow.RecordBatch) error) error {
	b := array.NewRecordBuilder(memory.DefaultAllocator, EdgeSchema())
	defer b.Release()
	src, dst := b.Field(0).(*array.Int64Builder), b.Field(1).(*array.Int64Builder)
	w := b.Field(2).(*array.Float64Builder)
	flush := func() error {
		rec := b.NewRecordBatch()
		defer rec.Release()
		return emit(rec)
	}
	rows := 0
	err := m.edges(func(i, j int, v float64) error {
		src.Append(int64(i))
		dst.Append(int64(j))
		w.Append(v)
		if rows++; rows == EdgeBatchRows {
			rows = 0
			return flush()
		}
		return nil
	})
	if err == nil && rows > 0 {
		err = flush()
	}
	return err
}

// WriteEdgesCSV writes the edge list of m as CSV: a header src,dst,weight,
// then one edge a line, the weights in the shortest form that reads back
// to the same bits.
func (m *CSR) WriteEdgesCSV(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(ColSrc + "," + ColDst + "," + ColWeight + "\n")
	var line []byte
	err := m.edges(func(i, j int, v float64) error {
		line = strconv.AppendInt(line[:0], int64(i), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(j), 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, v, 'g', -1, 64)
		line = append(line, '\n')
		_, err := bw.Write(line)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// edges calls fn for every stored pair (i, j) with i <= j, in row order.
func (m *CSR) edges(fn func(i, j int, v float64) error) error {
	for i := range m.N() {
		for e := m.RowPtr[i]; e < m.RowPtr[i+1]; e++ {
			if j := int(m.Col[e]); j >= i {
				if err := fn(i, j, m.Val[e]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
