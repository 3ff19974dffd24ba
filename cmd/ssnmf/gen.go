package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/parquetio"
	"github.com/ssnmf/ssnmf/store/vfs"
)

// genBatchRows is the number of rows gen generates and writes at a time;
// it holds one batch in memory.
const genBatchRows = 1 << 16

// genConfig is the parsed command line of gen.
type genConfig struct {
	n, p, k int
	seed    uint64
	sep     float64
	out     string
	quiet   bool
}

func parseGen(args []string, stdout io.Writer) (*genConfig, error) {
	c := &genConfig{}
	fs := newFlagSet("ssnmf gen", "Usage: ssnmf gen -n N [flags] -o FILE.parquet|FILE.arrow|FILE.csv|FILE.csv.gz\n\n"+
		"Writes a seeded Gaussian mixture: k centers drawn from N(0, sep² I), and n rows, each\n"+
		"a center chosen uniformly at random plus N(0, I) noise, as float64 columns x1..xp and\n"+
		"the center's index in an int32 column label. It generates and writes 65,536 rows at a\n"+
		"time, so its memory does not grow with n; the file is renamed into place when complete.")
	fs.IntVar(&c.n, "n", 0, "number of rows (required)")
	fs.IntVar(&c.p, "p", 16, "number of features")
	fs.IntVar(&c.k, "k", 10, "number of mixture components (classes)")
	fs.Uint64Var(&c.seed, "seed", 0, "random seed: the same seed and flags give the same values in every format")
	fs.Float64Var(&c.sep, "sep", 2, "standard deviation of the centers, in units of the noise's")
	fs.StringVar(&c.out, "o", "", "output `FILE`: .parquet, .arrow (Arrow IPC file), .csv or .csv.gz (required)")
	fs.BoolVar(&c.quiet, "q", false, "no summary line on stderr")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return nil, err
	}
	switch {
	case len(pos) > 0:
		return nil, usagef("gen takes no arguments, have %s (give the output with -o)", strings.Join(pos, " "))
	case c.n < 1:
		return nil, usagef("-n must be >= 1, have %d", c.n)
	case c.p < 1:
		return nil, usagef("-p must be >= 1, have %d", c.p)
	case c.k < 1:
		return nil, usagef("-k must be >= 1, have %d", c.k)
	case !(c.sep >= 0) || c.sep > 1e150:
		return nil, usagef("-sep must be a number >= 0, have %v", c.sep)
	case c.out == "":
		return nil, usagef("-o FILE is required")
	case genFormat(c.out) == "":
		return nil, usagef("-o %s: unknown extension, want .parquet, .arrow, .csv or .csv.gz", c.out)
	}
	return c, nil
}

// genFormat returns the output format of gen by the file's extension:
// "parquet", "arrow", "csv", "csv.gz", or "" if unknown; "csv" for an
// output written in place whose name has none of them.
func genFormat(path string) string {
	lower := strings.ToLower(path)
	if strings.HasSuffix(lower, ".csv.gz") {
		return "csv.gz"
	}
	switch filepath.Ext(lower) {
	case ".parquet":
		return "parquet"
	case ".arrow":
		return "arrow"
	case ".csv":
		return "csv"
	}
	if store.WrittenInPlace(path) { // /dev/null, a terminal, a named pipe
		return "csv"
	}
	return ""
}

// gen is the gen command.
func gen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseGen(args, stdout)
	if err != nil || checkOnly(ctx) {
		return err
	}
	out, err := createOutput(ctx, vfs.OS{}, "-o", c.out, stdout)
	if err != nil {
		return err
	}
	defer out.Abort()
	w, err := newBatchWriter(out, genFormat(c.out), c.p)
	if err != nil {
		return fmt.Errorf("-o %s: %w", c.out, err)
	}
	m := newMixture(c.p, c.k, c.sep, c.seed)
	x := make([]float64, genBatchRows*c.p)
	labels := make([]int32, genBatchRows)
	for lo := 0; lo < c.n; lo += genBatchRows {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted after %d rows: %w", lo, err)
		}
		rows := min(genBatchRows, c.n-lo)
		m.fill(x[:rows*c.p], labels[:rows])
		if err := w.write(x[:rows*c.p], labels[:rows]); err != nil {
			return fmt.Errorf("-o %s: rows %d:%d: %w", c.out, lo, lo+rows, err)
		}
	}
	if err := w.close(); err != nil {
		return fmt.Errorf("-o %s: %w", c.out, err)
	}
	if err := out.Commit(); err != nil {
		return err
	}
	if !c.quiet {
		fmt.Fprintf(stderr, "ssnmf gen: wrote %s: n=%d p=%d k=%d sep=%g seed=%d\n", c.out, c.n, c.p, c.k, c.sep, c.seed)
	}
	return nil
}

// mixture draws the rows of a Gaussian mixture in order from one seeded
// stream: first the k centers, then for each row its component and its
// noise. The values depend only on the seed and the shape, not on the
// batch size or the output format.
type mixture struct {
	rng     *rand.Rand
	p, k    int
	centers []float64 // k×p
}

func newMixture(p, k int, sep float64, seed uint64) *mixture {
	m := &mixture{rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), p: p, k: k, centers: make([]float64, k*p)}
	for i := range m.centers {
		m.centers[i] = sep * m.rng.NormFloat64()
	}
	return m
}

// fill draws the next len(labels) rows into x (row-major) and labels.
func (m *mixture) fill(x []float64, labels []int32) {
	for i := range labels {
		c := m.rng.IntN(m.k)
		labels[i] = int32(c)
		row, center := x[i*m.p:(i+1)*m.p], m.centers[c*m.p:(c+1)*m.p]
		for j := range row {
			row[j] = center[j] + m.rng.NormFloat64()
		}
	}
}

// genSchema is the schema of gen's output: x1..xp float64, label int32.
func genSchema(p int) *arrow.Schema {
	fields := make([]arrow.Field, 0, p+1)
	for j := range p {
		fields = append(fields, arrow.Field{Name: "x" + strconv.Itoa(j+1), Type: arrow.PrimitiveTypes.Float64})
	}
	fields = append(fields, arrow.Field{Name: "label", Type: arrow.PrimitiveTypes.Int32})
	return arrow.NewSchema(fields, nil)
}

// batchWriter writes gen's batches in one format.
type batchWriter interface {
	write(x []float64, labels []int32) error
	close() error
}

func newBatchWriter(w io.Writer, format string, p int) (batchWriter, error) {
	switch format {
	case "csv":
		return newCSVBatchWriter(w, p, nil), nil
	case "csv.gz":
		zw := gzip.NewWriter(w)
		return newCSVBatchWriter(zw, p, zw), nil
	case "arrow":
		fw, err := ipc.NewFileWriter(w, ipc.WithSchema(genSchema(p)))
		if err != nil {
			return nil, err
		}
		return newArrowBatchWriter(fw, p), nil
	case "parquet":
		pw, err := parquetio.NewWriter(w, genSchema(p))
		if err != nil {
			return nil, err
		}
		return newArrowBatchWriter(pw, p), nil
	}
	return nil, fmt.Errorf("unknown output format %q", format)
}

// recordWriter is the shape of Arrow's IPC file writer and of the Parquet
// writer.
type recordWriter interface {
	Write(rec arrow.RecordBatch) error
	Close() error
}

// arrowBatchWriter converts batches into record batches of genSchema.
type arrowBatchWriter struct {
	w recordWriter
	p int
	b *array.RecordBuilder
}

func newArrowBatchWriter(w recordWriter, p int) *arrowBatchWriter {
	return &arrowBatchWriter{w: w, p: p, b: array.NewRecordBuilder(memory.DefaultAllocator, genSchema(p))}
}

func (a *arrowBatchWriter) write(x []float64, labels []int32) error {
	rows := len(labels)
	for j := range a.p {
		col := a.b.Field(j).(*array.Float64Builder)
		col.Reserve(rows)
		for i := range rows {
			col.UnsafeAppend(x[i*a.p+j])
		}
	}
	a.b.Field(a.p).(*array.Int32Builder).AppendValues(labels, nil)
	rec := a.b.NewRecordBatch()
	defer rec.Release()
	return a.w.Write(rec)
}

func (a *arrowBatchWriter) close() error {
	a.b.Release()
	return a.w.Close()
}

// csvBatchWriter writes batches as CSV with header x1..xp,label; floats in
// the shortest form that reads back to the same float64.
type csvBatchWriter struct {
	bw   *bufio.Writer
	zw   io.Closer // the gzip stream under bw, nil for plain CSV
	p    int
	line []byte
	head bool
}

func newCSVBatchWriter(w io.Writer, p int, zw io.Closer) *csvBatchWriter {
	return &csvBatchWriter{bw: bufio.NewWriterSize(w, 1<<16), zw: zw, p: p}
}

func (c *csvBatchWriter) write(x []float64, labels []int32) error {
	if !c.head {
		c.head = true
		for j := range c.p {
			c.line = append(c.line, 'x')
			c.line = strconv.AppendInt(c.line, int64(j+1), 10)
			c.line = append(c.line, ',')
		}
		c.line = append(c.line, "label\n"...)
		c.bw.Write(c.line) // bufio.Writer keeps any error for Flush
	}
	for i, l := range labels {
		c.line = c.line[:0]
		for _, v := range x[i*c.p : (i+1)*c.p] {
			c.line = strconv.AppendFloat(c.line, v, 'g', -1, 64)
			c.line = append(c.line, ',')
		}
		c.line = strconv.AppendInt(c.line, int64(l), 10)
		c.line = append(c.line, '\n')
		if _, err := c.bw.Write(c.line); err != nil {
			return err
		}
	}
	return nil
}

func (c *csvBatchWriter) close() error {
	err := c.bw.Flush()
	if c.zw != nil {
		if cerr := c.zw.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
