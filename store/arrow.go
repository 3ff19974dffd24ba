package store

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// MembershipBatchRows is the number of rows per record batch (or Parquet
// row group) of a membership file: a writer holds one batch in memory at a
// time.
const MembershipBatchRows = 1 << 16

// MembershipSchema returns the Arrow schema of a membership file with k
// clusters: id (int64, the 0-based row index of the input row), float64
// columns w1..wk, then cluster (int32, the 0-based argmax of the row, the
// lowest index on ties) and confidence (float64, the row's largest
// membership, w at cluster). No column has nulls.
func MembershipSchema(k int) *arrow.Schema {
	fields := make([]arrow.Field, 0, k+3)
	fields = append(fields, arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64})
	for j := range k {
		fields = append(fields, arrow.Field{Name: "w" + strconv.Itoa(j+1), Type: arrow.PrimitiveTypes.Float64})
	}
	fields = append(fields, arrow.Field{Name: "cluster", Type: arrow.PrimitiveTypes.Int32},
		arrow.Field{Name: "confidence", Type: arrow.PrimitiveTypes.Float64})
	return arrow.NewSchema(fields, nil)
}

// checkMembership checks that W holds n×k values.
func checkMembership(W []float64, n, k int) error {
	if n < 0 || k < 1 {
		return fmt.Errorf("membership matrix: invalid dimensions %d×%d", n, k)
	}
	if n > math.MaxInt/k || len(W) != n*k {
		return fmt.Errorf("membership matrix: %d values for %d×%d", len(W), n, k)
	}
	return nil
}

// MembershipBatches calls yield with the memberships W (n×k, row-major) as
// record batches of MembershipSchema(k), of up to MembershipBatchRows rows
// each, in row order, and stops at the first error yield returns. A batch
// is released when yield returns; yield must retain it to keep it. Writers
// of every format use it, so that all write the same columns.
func MembershipBatches(W []float64, n, k int, yield func(rec arrow.RecordBatch) error) error {
	if err := checkMembership(W, n, k); err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, MembershipSchema(k))
	defer b.Release()
	for lo := 0; lo < n; lo += MembershipBatchRows {
		hi := min(n, lo+MembershipBatchRows)
		id := b.Field(0).(*array.Int64Builder)
		id.Reserve(hi - lo)
		for i := lo; i < hi; i++ {
			id.UnsafeAppend(int64(i))
		}
		for j := range k {
			col := b.Field(1 + j).(*array.Float64Builder)
			col.Reserve(hi - lo)
			for i := lo; i < hi; i++ {
				col.UnsafeAppend(W[i*k+j])
			}
		}
		cl := b.Field(k + 1).(*array.Int32Builder)
		conf := b.Field(k + 2).(*array.Float64Builder)
		cl.Reserve(hi - lo)
		conf.Reserve(hi - lo)
		for i := lo; i < hi; i++ {
			row := W[i*k : (i+1)*k]
			c := Argmax(row)
			cl.UnsafeAppend(int32(c))
			conf.UnsafeAppend(row[c])
		}
		rec := b.NewRecordBatch()
		err := yield(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("rows %d:%d: %w", lo, hi, err)
		}
	}
	return nil
}

// WriteMembershipArrow writes W (n×k, row-major) as an Arrow IPC file with
// the columns of MembershipSchema, in record batches of up to
// MembershipBatchRows rows.
func WriteMembershipArrow(w io.Writer, W []float64, n, k int) error {
	if err := checkMembership(W, n, k); err != nil {
		return fmt.Errorf("write memberships: %w", err)
	}
	fw, err := ipc.NewFileWriter(w, ipc.WithSchema(MembershipSchema(k)))
	if err != nil {
		return fmt.Errorf("write memberships: %w", err)
	}
	if err := MembershipBatches(W, n, k, fw.Write); err != nil {
		return fmt.Errorf("write memberships: %w", err)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("write memberships: %w", err)
	}
	return nil
}
