package store

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// CSVWriter writes record batches as CSV: a header of the schema's field
// names, then a line a row, float64 columns in the shortest form that
// reads back to the same float64 (strconv.AppendFloat(v, 'g', -1, 64))
// and integer columns in decimal. It has the Write and Close of Arrow's
// IPC file writer and of the Parquet writer (parquetio.NewWriter), so
// that a table of rows is written in any of the three formats through one
// interface.
type CSVWriter struct {
	bw     *bufio.Writer
	schema *arrow.Schema
	line   []byte
	head   bool
}

// NewCSVWriter returns a CSVWriter of record batches of schema to w, whose
// columns must be float64, int32 or int64, without nulls, and named
// without a comma, a quote or a line break (names are written unquoted).
func NewCSVWriter(w io.Writer, schema *arrow.Schema) *CSVWriter {
	return &CSVWriter{bw: bufio.NewWriterSize(w, 1<<16), schema: schema}
}

// header writes the header line once.
func (c *CSVWriter) header() {
	if c.head {
		return
	}
	c.head = true
	c.line = c.line[:0]
	for j, f := range c.schema.Fields() {
		if j > 0 {
			c.line = append(c.line, ',')
		}
		c.line = append(c.line, f.Name...)
	}
	c.line = append(c.line, '\n')
	c.bw.Write(c.line) // bufio.Writer keeps any error for Flush
}

// Write writes the rows of rec, after the header if they are the first.
func (c *CSVWriter) Write(rec arrow.RecordBatch) error {
	if !rec.Schema().Equal(c.schema) {
		return fmt.Errorf("csv: record batch of schema %v, want %v", rec.Schema(), c.schema)
	}
	cols := make([]csvColumn, rec.NumCols())
	for j, col := range rec.Columns() {
		if name := c.schema.Field(j).Name; strings.ContainsAny(name, ",\"\r\n") {
			return fmt.Errorf("csv: column name %s needs quoting", Quote(name))
		}
		if col.NullN() > 0 {
			return fmt.Errorf("csv: column %q has nulls", c.schema.Field(j).Name)
		}
		switch a := col.(type) {
		case *array.Float64:
			cols[j].f = a.Float64Values()
		case *array.Int32:
			cols[j].i32 = a.Int32Values()
		case *array.Int64:
			cols[j].i64 = a.Int64Values()
		default:
			return fmt.Errorf("csv: column %q of type %v, want float64, int32 or int64", c.schema.Field(j).Name, col.DataType())
		}
	}
	c.header()
	for i := range int(rec.NumRows()) {
		c.line = c.line[:0]
		for j := range cols {
			if j > 0 {
				c.line = append(c.line, ',')
			}
			c.line = cols[j].append(c.line, i)
		}
		c.line = append(c.line, '\n')
		if _, err := c.bw.Write(c.line); err != nil {
			return err
		}
	}
	return nil
}

// Close writes the header if no batch was written and flushes the lines
// to the writer, which it does not close.
func (c *CSVWriter) Close() error {
	c.header()
	return c.bw.Flush()
}

// csvColumn is a column of a record batch: the values of its one type.
type csvColumn struct {
	f   []float64
	i32 []int32
	i64 []int64
}

// append appends the column's value in row i to line.
func (c *csvColumn) append(line []byte, i int) []byte {
	switch {
	case c.f != nil:
		return strconv.AppendFloat(line, c.f[i], 'g', -1, 64)
	case c.i32 != nil:
		return strconv.AppendInt(line, int64(c.i32[i]), 10)
	}
	return strconv.AppendInt(line, c.i64[i], 10)
}
