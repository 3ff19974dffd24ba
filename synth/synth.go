package synth

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/store/parquetio"
)

// BatchRows is the number of rows Write generates and writes at a time;
// it holds one batch in memory.
const BatchRows = 1 << 16

// CSVGzip is the format of gzip-compressed CSV, beside those of package
// input (input.Parquet, input.Arrow, input.CSV) that Write also writes.
const CSVGzip = input.CSVGzip

// Settings are the shape and seed of a mixture.
type Settings struct {
	// N is the number of rows, P the number of features and K the number
	// of components (classes); each must be at least 1.
	N, P, K int
	// Sep is the standard deviation of the centers, in units of the
	// noise's; at least 0.
	Sep float64
	// Seed seeds the stream: the same seed and shape give the same values.
	Seed uint64
}

// check reports settings Write cannot generate.
func (s Settings) check() error {
	if s.N < 1 || s.P < 1 || s.K < 1 || !(s.Sep >= 0) || s.Sep > 1e150 {
		return fmt.Errorf("synth: n=%d p=%d k=%d sep=%v: want n, p, k >= 1 and 0 <= sep <= 1e150", s.N, s.P, s.K, s.Sep)
	}
	return nil
}

// Mixture draws the rows of a Gaussian mixture in order from one seeded
// stream: first the K centers, drawn from N(0, Sep² I), then for each row
// its component, uniform over the K, and its N(0, I) noise around the
// component's center.
type Mixture struct {
	rng     *rand.Rand
	p, k    int
	centers []float64 // k×p
}

// NewMixture returns the mixture of s's shape, seed and separation, its
// centers drawn; s.N is not used.
func NewMixture(s Settings) *Mixture {
	m := &Mixture{rng: rand.New(rand.NewPCG(s.Seed, 0x9e3779b97f4a7c15)), p: s.P, k: s.K, centers: make([]float64, s.K*s.P)}
	for i := range m.centers {
		m.centers[i] = s.Sep * m.rng.NormFloat64()
	}
	return m
}

// Fill draws the next len(labels) rows into x (len(labels)×P, row-major)
// and their components into labels.
func (m *Mixture) Fill(x []float64, labels []int32) {
	for i := range labels {
		c := m.rng.IntN(m.k)
		labels[i] = int32(c)
		row, center := x[i*m.p:(i+1)*m.p], m.centers[c*m.p:(c+1)*m.p]
		for j := range row {
			row[j] = center[j] + m.rng.NormFloat64()
		}
	}
}

// Schema returns the schema of a mixture of p features: float64 columns
// x1..xp, then the component's index in the int32 column label.
func Schema(p int) *arrow.Schema {
	fields := make([]arrow.Field, 0, p+1)
	for j := range p {
		fields = append(fields, arrow.Field{Name: "x" + strconv.Itoa(j+1), Type: arrow.PrimitiveTypes.Float64})
	}
	fields = append(fields, arrow.Field{Name: "label", Type: arrow.PrimitiveTypes.Int32})
	return arrow.NewSchema(fields, nil)
}

// Format returns the format of an output by its name's extension, as
// input.OutputFormat has it: input.Parquet, input.Arrow, input.CSV,
// CSVGzip, or "" if none.
func Format(path string) string { return input.OutputFormat(path) }

// Write generates the mixture of s and writes it to w in format, as
// Format names it (input.Arrow: an Arrow IPC file), with the columns of
// Schema(s.P), in batches of BatchRows rows: Parquet row groups and Arrow
// record batches of that size. It checks ctx before each batch; an error
// names the rows of the batch at fault, or the rows written before ctx
// ended.
func Write(ctx context.Context, w io.Writer, format string, s Settings) error {
	if err := s.check(); err != nil {
		return err
	}
	schema := Schema(s.P)
	rw, err := newWriter(w, format, schema)
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	m := NewMixture(s)
	x := make([]float64, min(BatchRows, s.N)*s.P)
	labels, col := make([]int32, min(BatchRows, s.N)), make([]float64, min(BatchRows, s.N))
	for lo := 0; lo < s.N; lo += BatchRows {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted after %d rows: %w", lo, err)
		}
		rows := min(BatchRows, s.N-lo)
		m.Fill(x[:rows*s.P], labels[:rows])
		rec := record(b, x[:rows*s.P], labels[:rows], s.P, col)
		err := rw.Write(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("rows %d:%d: %w", lo, lo+rows, err)
		}
	}
	return rw.Close()
}

// record returns the rows of x (row-major, p columns) and their labels as
// a record batch of Schema(p), built with b; col is scratch of a column.
func record(b *array.RecordBuilder, x []float64, labels []int32, p int, col []float64) arrow.RecordBatch {
	col = col[:len(labels)]
	for j := range p {
		for i := range col {
			col[i] = x[i*p+j]
		}
		b.Field(j).(*array.Float64Builder).AppendValues(col, nil)
	}
	b.Field(p).(*array.Int32Builder).AppendValues(labels, nil)
	return b.NewRecordBatch()
}

// recordWriter is the shape of Arrow's IPC file writer, of the Parquet
// writer and of store.CSVWriter.
type recordWriter interface {
	Write(rec arrow.RecordBatch) error
	Close() error
}

// newWriter returns the writer of record batches of schema to w in format.
func newWriter(w io.Writer, format string, schema *arrow.Schema) (recordWriter, error) {
	switch format {
	case input.CSV:
		return store.NewCSVWriter(w, schema), nil
	case CSVGzip:
		zw := gzip.NewWriter(w)
		return gzipWriter{store.NewCSVWriter(zw, schema), zw}, nil
	case input.Arrow:
		return ipc.NewFileWriter(w, ipc.WithSchema(schema))
	case input.Parquet:
		return parquetio.NewWriter(w, schema)
	}
	return nil, fmt.Errorf("unknown output format %q", format)
}

// gzipWriter is a CSV writer into a gzip stream, which Close ends.
type gzipWriter struct {
	*store.CSVWriter
	zw io.Closer
}

func (g gzipWriter) Close() error {
	err := g.CSVWriter.Close()
	if cerr := g.zw.Close(); err == nil {
		err = cerr
	}
	return err
}
