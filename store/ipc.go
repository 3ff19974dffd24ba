package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// arrowFileMagic begins (and ends) an Arrow IPC file; a stream has no magic.
const arrowFileMagic = "ARROW1"

// StreamBatchLimit is the largest record batch body, in bytes, that
// [ReadArrowStream] accepts. A stream reader holds one batch at a time, so
// this bounds its memory; write larger data in more batches. Batches of an
// IPC file are limited only by the file's size.
const StreamBatchLimit = 1 << 30

// streamMetadataLimit is the largest message metadata (a flatbuffer that
// describes a schema or a batch's buffers, not its data) that a stream
// reader accepts: a text file read as a stream then fails at once rather
// than after reading a "length" made of its first four characters.
const streamMetadataLimit = 16 << 20

// RecordBatches is a sequence of Arrow record batches of one schema, as
// produced by [array.RecordReader] and by Parquet's record readers. A batch
// returned by RecordBatch need only stay valid until the next call to Next.
type RecordBatches interface {
	Schema() *arrow.Schema
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
}

// ReadArrow reads a table from the Arrow IPC file or stream at path, as
// [ReadArrowFrom] does. Errors name the file by path.
func ReadArrow(path string, opt TableOptions) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading Arrow: %w", err)
	}
	defer f.Close()
	return ReadArrowFrom(f, path, opt)
}

// ReadArrowFrom reads a table from the Arrow IPC file or stream in f, at
// its start, told apart by its leading bytes, named name in errors. A
// regular file is read as [ReadArrowFile] or [ReadArrowStream] reads it;
// anything else (a pipe, a FIFO), which cannot seek, as
// [ReadArrowSequential] does.
func ReadArrowFrom(f *os.File, name string, opt TableOptions) (*Table, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		return ReadArrowSequential(bufio.NewReaderSize(f, 1<<20), name, opt)
	}
	magic := make([]byte, len(arrowFileMagic))
	n, err := f.ReadAt(magic, 0)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if n == len(magic) && string(magic) == arrowFileMagic {
		return ReadArrowFile(f, name, opt)
	}
	return ReadArrowStream(bufio.NewReaderSize(f, 1<<20), name, opt)
}

// ReadArrowSequential reads a table from an Arrow IPC stream, or from an
// Arrow IPC file read front to back, from r, which need not seek (a pipe),
// named name in errors. An IPC file is its magic and padding (8 bytes),
// the stream of its schema and record batches, then a footer that indexes
// them: the stream is read, and the footer, which repeats what the stream
// said, is not. Record batches are read one at a time, each at most
// StreamBatchLimit bytes.
func ReadArrowSequential(r *bufio.Reader, name string, opt TableOptions) (*Table, error) {
	if magic, _ := r.Peek(arrowFilePreamble); len(magic) == arrowFilePreamble && string(magic[:len(arrowFileMagic)]) == arrowFileMagic {
		if _, err := r.Discard(arrowFilePreamble); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return readArrowStream(r, name, opt, StreamBatchLimit)
}

// arrowFilePreamble is the length of an Arrow IPC file's magic padded to 8
// bytes, after which its stream begins.
const arrowFilePreamble = 8

// ReadArrowFile reads a table from an Arrow IPC file (the random-access
// format, magic "ARROW1"), one record batch at a time, named name in
// errors. Columns are chosen by opt as for CSV; see [ReadRecords] for the
// column types accepted.
func ReadArrowFile(r ipc.ReadAtSeeker, name string, opt TableOptions) (*Table, error) {
	size, err := r.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = r.Seek(0, io.SeekStart)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return readArrowFile(r, name, opt, size)
}

func readArrowFile(r ipc.ReadAtSeeker, name string, opt TableOptions, size int64) (t *Table, err error) {
	defer recoverMalformed(name, "Arrow IPC file", &err)
	if err := verifyArrowFile(r, size); err != nil {
		return nil, fmt.Errorf("%s: not a valid Arrow IPC file: %w", name, err)
	}
	fr, err := ipc.NewFileReader(r, ipc.WithBodySizeLimit(size), ipc.WithMetadataSizeLimit(size))
	if err != nil {
		return nil, fmt.Errorf("%s: not a valid Arrow IPC file: %w", name, err)
	}
	defer fr.Close()
	return ReadRecords(&fileBatches{r: fr}, name, opt)
}

// ReadArrowStream reads a table from an Arrow IPC stream, named name in
// errors. Record batches are read one at a time, each at most
// StreamBatchLimit bytes. See [ReadRecords] for the column types accepted.
func ReadArrowStream(r io.Reader, name string, opt TableOptions) (*Table, error) {
	return readArrowStream(r, name, opt, StreamBatchLimit)
}

func readArrowStream(r io.Reader, name string, opt TableOptions, limit int64) (t *Table, err error) {
	defer recoverMalformed(name, "Arrow IPC stream", &err)
	// Messages are read and checked here (see ipcverify.go): besides
	// trusting vector lengths, ipc.NewReader does not pass its size limits
	// on to the message reader it makes (arrow-go v18.8.0).
	sr, err := ipc.NewReaderFromMessageReader(&messageReader{r: r, bodyLimit: limit})
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file, expected an Arrow IPC stream or file", name)
		}
		return nil, fmt.Errorf("%s: not a valid Arrow IPC stream: %w", name, err)
	}
	defer sr.Release()
	return ReadRecords(sr, name, opt)
}

// recoverMalformed turns a panic of a decoder reading malformed input into
// an error naming the input. The Arrow and Parquet decoders check much, but
// not everything, of what they decode.
func recoverMalformed(name, what string, err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%s: malformed %s: %v", name, what, p)
	}
}

// fileBatches presents the record batches of an IPC file as RecordBatches.
type fileBatches struct {
	r   *ipc.FileReader
	i   int
	cur arrow.RecordBatch
	err error
}

func (f *fileBatches) Schema() *arrow.Schema { return f.r.Schema() }

func (f *fileBatches) Next() bool {
	if f.err != nil || f.i >= f.r.NumRecords() {
		return false
	}
	f.cur, f.err = f.r.RecordBatch(f.i)
	if f.err != nil {
		f.err = fmt.Errorf("record batch %d: %w", f.i, f.err)
		return false
	}
	f.i++
	return true
}

func (f *fileBatches) RecordBatch() arrow.RecordBatch { return f.cur }
func (f *fileBatches) Err() error                     { return f.err }

// ReadRecords reads a table from a sequence of record batches, named name
// in errors. Columns are chosen by opt by their field names, as for CSV
// ([SelectColumns]). Feature columns must be of an integer type, float16,
// float32 or float64, and every value must be present (no nulls) and finite;
// values become float64. The label column may be of an integer, floating
// point or string type (utf8, large_utf8, utf8_view), or dictionary-encoded
// with such values; its values are the label texts, and a null or empty
// label is an error. Errors name the column and the row, counted from 0
// across all batches ("row index 12"), at fault.
func ReadRecords(src RecordBatches, name string, opt TableOptions) (t *Table, err error) {
	var b *tableBuilder
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: malformed record batch: %v", name, p)
		}
		if err != nil && b != nil {
			b.abort()
		}
	}()
	schema := src.Schema()
	fields := schema.Fields()
	columns := make([]string, len(fields))
	for j, f := range fields {
		columns[j] = f.Name
	}
	label, features, err := SelectColumns(name, columns, opt)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(features))
	for i, j := range features {
		names[i] = columns[j]
		if !isNumeric(fields[j].Type) {
			return nil, fmt.Errorf("%s: column %s: type %s is not numeric; %s", name, Quote(columns[j]), fields[j].Type, opt.Hint())
		}
	}
	labelName := ""
	if label >= 0 {
		labelName = columns[label]
		if !isLabelType(fields[label].Type) {
			return nil, fmt.Errorf("%s: label column %s: type %s is not supported; want integers, floats or strings", name, Quote(labelName), fields[label].Type)
		}
	}
	b, err = newTableBuilder(names, labelName, opt)
	if err != nil {
		return nil, err
	}

	p := len(features)
	cols := make([]numericColumn, p)
	var buf []float64
	var text []byte
	for src.Next() {
		rec := src.RecordBatch()
		if !rec.Schema().Equal(schema) {
			return nil, fmt.Errorf("%s: record batch at row index %d has schema %v, want %v", name, b.t.N, rec.Schema(), schema)
		}
		m := int(rec.NumRows())
		if m == 0 {
			continue
		}
		// Check the lengths before allocating: they come from the file.
		for i, j := range features {
			cols[i] = asNumeric(rec.Column(j))
			if l := cols[i].len(); l != m {
				return nil, fmt.Errorf("%s: column %s has %d values in a batch of %d rows at row index %d", name, Quote(columns[j]), l, m, b.t.N)
			}
		}
		if cap(buf) < m*p {
			buf = make([]float64, m*p)
		}
		buf = buf[:m*p]
		for i, col := range cols {
			if r, what := col.fill(buf, i, p); r >= 0 {
				return nil, fmt.Errorf("%s: row index %d: column %s: %s", name, b.t.N+r, Quote(names[i]), what)
			}
		}
		if label >= 0 {
			col := rec.Column(label)
			if col.Len() != m {
				return nil, fmt.Errorf("%s: column %s has %d values in a batch of %d rows at row index %d", name, Quote(labelName), col.Len(), m, b.t.N)
			}
			labelOf := labelTexts(col)
			for r := range m {
				var what string
				text, what = labelOf(text, r)
				if what != "" {
					return nil, fmt.Errorf("%s: row index %d: column %s: %s", name, b.t.N+r, Quote(labelName), what)
				}
				b.addLabelBytes(text)
			}
		}
		if err := b.addRows(buf); err != nil {
			return nil, err
		}
	}
	if err := src.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if b.t.N == 0 {
		return nil, fmt.Errorf("%s: no data rows", name)
	}
	return b.finish()
}

// isNumeric reports whether a feature column may have type t.
func isNumeric(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

// isLabelType reports whether a label column may have type t.
func isLabelType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return true
	case arrow.DICTIONARY:
		return isLabelType(t.(*arrow.DictionaryType).ValueType)
	}
	return isNumeric(t)
}

// numericColumn is a column of a batch seen through the Go type of its
// values, which asNumeric chooses.
type numericColumn interface {
	// len returns the number of values the column's buffers hold, -1 for a
	// column that is not numeric.
	len() int
	// fill stores the values into column i of the row-major batch dst of
	// width p. It returns -1, or the first row whose value is null or not
	// finite and what is wrong with it.
	fill(dst []float64, i, p int) (int, string)
	// appendLabel appends the label text of row r, which is not null, to
	// buf[:0]. The text is empty and what says why if it is not a label.
	appendLabel(buf []byte, r int) (text []byte, what string)
}

// number is the element type of a numeric Arrow array.
type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// numbers is a numeric Arrow array with its values as a slice of T.
type numbers[T number] struct {
	a    arrow.Array
	vals []T
}

// numericTypes are the views of the numeric Arrow types, which asNumeric
// tries in turn.
var numericTypes = [...]func(arrow.Array) (numericColumn, bool){
	numbersOf[int8], numbersOf[int16], numbersOf[int32], numbersOf[int64],
	numbersOf[uint8], numbersOf[uint16], numbersOf[uint32], numbersOf[uint64],
	numbersOf[float32], numbersOf[float64], float16s,
}

// asNumeric returns col as a numericColumn, an otherType if its type is not
// numeric.
func asNumeric(col arrow.Array) numericColumn {
	for _, as := range numericTypes {
		if c, ok := as(col); ok {
			return c
		}
	}
	return otherType{col}
}

// numbersOf returns col as numbers[T] if its values are of type T: each of
// Arrow's integer and floating-point arrays other than float16
// ([array.Int8] … [array.Float64]) has a method Values() []T, and no other
// array has one for these T.
func numbersOf[T number](col arrow.Array) (numericColumn, bool) {
	a, ok := col.(interface{ Values() []T })
	if !ok {
		return nil, false
	}
	return numbers[T]{col, a.Values()}, true
}

// float16s returns a float16 array as numbers[float32], which hold its
// values exactly.
func float16s(col arrow.Array) (numericColumn, bool) {
	a, ok := col.(*array.Float16)
	if !ok {
		return nil, false
	}
	vals := a.Values()
	f32 := make([]float32, len(vals))
	for r, v := range vals {
		f32[r] = v.Float32()
	}
	return numbers[float32]{col, f32}, true
}

func (c numbers[T]) len() int { return len(c.vals) }

func (c numbers[T]) fill(dst []float64, i, p int) (int, string) {
	nulls := c.a.NullN() > 0
	for r, v := range c.vals {
		if nulls && c.a.IsNull(r) {
			return r, "null value, want a number"
		}
		x := float64(v)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return r, strconv.FormatFloat(x, 'g', -1, 64) + " is not a finite number"
		}
		dst[r*p+i] = x
	}
	return -1, ""
}

func (c numbers[T]) appendLabel(buf []byte, r int) ([]byte, string) {
	v := c.vals[r]
	switch f := any(v).(type) {
	case float32:
		return floatLabel(buf, float64(f))
	case float64:
		return floatLabel(buf, f)
	}
	if v < 0 {
		return strconv.AppendInt(buf[:0], int64(v), 10), ""
	}
	return strconv.AppendUint(buf[:0], uint64(v), 10), ""
}

// otherType is a column whose type is not numeric. The schema was checked;
// a feature column of another type is malformed.
type otherType struct{ a arrow.Array }

func (c otherType) len() int { return -1 }

func (c otherType) fill([]float64, int, int) (int, string) {
	return 0, fmt.Sprintf("type %s is not numeric", c.a.DataType())
}

func (c otherType) appendLabel(buf []byte, _ int) ([]byte, string) {
	return buf[:0], fmt.Sprintf("type %s is not supported for labels", c.a.DataType())
}

// labelFunc appends the label text of row r of a column to buf[:0]. The
// text is empty and what says why if the label is missing.
type labelFunc func(buf []byte, r int) (text []byte, what string)

// labelTexts returns the labelFunc of a label column of any type that
// isLabelType accepts.
func labelTexts(col arrow.Array) labelFunc {
	present := presentLabels(col)
	return func(buf []byte, r int) ([]byte, string) {
		if col.IsNull(r) {
			return buf[:0], "null label (a row with a missing label is refused: " + MissingLabels + "; drop the row, or choose another -label)"
		}
		return present(buf, r)
	}
}

// presentLabels is labelTexts for rows that are not null.
func presentLabels(col arrow.Array) labelFunc {
	switch a := col.(type) {
	case *array.Dictionary:
		var values labelFunc // made at first use, as the rows may all be null
		return func(buf []byte, r int) ([]byte, string) {
			if values == nil {
				values = labelTexts(a.Dictionary())
			}
			return values(buf, a.GetValueIndex(r))
		}
	case interface{ Value(int) string }: // utf8, large_utf8 and utf8_view
		return func(buf []byte, r int) ([]byte, string) {
			buf = append(buf[:0], a.Value(r)...)
			if t := bytes.TrimSpace(buf); len(t) <= len("null") {
				if what, missing := missingLabel(string(t)); missing {
					return buf, what
				}
			}
			return buf, ""
		}
	}
	return asNumeric(col).appendLabel
}

// floatLabel appends the text of a floating-point label to buf: the
// shortest decimal that reads back to v ("3" for 3.0). A NaN or infinite
// label is refused.
func floatLabel(buf []byte, v float64) ([]byte, string) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return buf[:0], strconv.FormatFloat(v, 'g', -1, 64) + " is not a finite label"
	}
	return strconv.AppendFloat(buf[:0], v, 'g', -1, 64), ""
}
