package store

import (
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// arrowBatchRows is the number of rows per record batch of an Arrow output
// file: the writer holds one batch in memory at a time.
const arrowBatchRows = 1 << 16

// MembershipSchema returns the Arrow schema of a membership file with k
// clusters: non-nullable float64 columns w1..wk, then cluster (int32, the
// 0-based argmax of the row, the lowest index on ties).
func MembershipSchema(k int) *arrow.Schema {
	fields := make([]arrow.Field, 0, k+1)
	for j := range k {
		fields = append(fields, arrow.Field{Name: "w" + strconv.Itoa(j+1), Type: arrow.PrimitiveTypes.Float64})
	}
	fields = append(fields, arrow.Field{Name: "cluster", Type: arrow.PrimitiveTypes.Int32})
	return arrow.NewSchema(fields, nil)
}

// WriteMembershipArrow writes W (n×k, row-major) as an Arrow IPC file with
// the columns of MembershipSchema, in record batches of up to 65,536 rows.
func WriteMembershipArrow(w io.Writer, W []float64, n, k int) error {
	if k < 1 || n < 0 || len(W) != n*k {
		return fmt.Errorf("write memberships: W has %d values, want n×k = %d×%d", len(W), n, k)
	}
	schema := MembershipSchema(k)
	fw, err := ipc.NewFileWriter(w, ipc.WithSchema(schema))
	if err != nil {
		return fmt.Errorf("write memberships: %w", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for lo := 0; lo < n; lo += arrowBatchRows {
		hi := min(n, lo+arrowBatchRows)
		for j := range k {
			col := b.Field(j).(*array.Float64Builder)
			col.Reserve(hi - lo)
			for i := lo; i < hi; i++ {
				col.UnsafeAppend(W[i*k+j])
			}
		}
		cl := b.Field(k).(*array.Int32Builder)
		cl.Reserve(hi - lo)
		for i := lo; i < hi; i++ {
			cl.UnsafeAppend(int32(Argmax(W[i*k : (i+1)*k])))
		}
		rec := b.NewRecordBatch()
		err := fw.Write(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("write memberships: rows %d:%d: %w", lo, hi, err)
		}
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("write memberships: %w", err)
	}
	return nil
}
