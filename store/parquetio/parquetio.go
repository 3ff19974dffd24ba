// Package parquetio reads feature tables from Parquet files and writes
// membership matrices and other tables as Parquet. It is a package of its
// own so that the core packages do not compile the Parquet implementation;
// only the command line imports it.
//
// Reading streams the file: row groups are decoded in record batches of
// BatchRows rows, only the selected columns are decoded at all, and each
// batch is converted at once into the [store.Table] (on the heap or, with
// TableOptions.MapDir, into a memory-mapped matrix file), so a file is
// never held in memory whole. Column selection and the accepted types are
// those of [store.ReadRecords]: integer and floating-point feature columns,
// and an integer, floating-point or string label column; nulls, NaN and
// infinities are errors naming the column and the row.
//
// Files are written with one flat column per field (no nested or
// FixedSizeList columns, which arrow-go before v18 wrote as nulls; see
// apache/arrow-go#584), without dictionary encoding or compression, in row
// groups of at most RowGroupRows rows.
package parquetio

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ssnmf/ssnmf/store"
)

// BatchRows is the number of rows decoded at a time when reading.
const BatchRows = 1 << 16

// RowGroupRows is the largest row group written. A writer holds one row
// group in memory; store.MembershipBatches makes batches of this size, each
// written as one row group.
const RowGroupRows = store.MembershipBatchRows

// Read reads a table from the Parquet file at path, naming it by path in
// errors.
func Read(path string, opt store.TableOptions) (*store.Table, error) {
	rdr, err := file.OpenParquetFile(path, false, file.WithReadProps(readProps()))
	if err != nil {
		return nil, fmt.Errorf("%s: not a valid Parquet file: %w", path, err)
	}
	defer rdr.Close()
	return read(rdr, path, opt)
}

// ReadFrom reads a table from a Parquet file in r, named name in errors.
func ReadFrom(r parquet.ReaderAtSeeker, name string, opt store.TableOptions) (t *store.Table, err error) {
	defer recoverMalformed(name, &err)
	rdr, err := file.NewParquetReader(r, file.WithReadProps(readProps()))
	if err != nil {
		return nil, fmt.Errorf("%s: not a valid Parquet file: %w", name, err)
	}
	defer rdr.Close()
	return read(rdr, name, opt)
}

// readProps are the reader properties: column chunks are read through a
// buffer rather than loaded whole.
func readProps() *parquet.ReaderProperties {
	p := parquet.NewReaderProperties(memory.DefaultAllocator)
	p.BufferedStreamEnabled = true
	return p
}

// recoverMalformed turns a panic of the decoder reading a malformed file
// into an error naming the file.
func recoverMalformed(name string, err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%s: malformed Parquet file: %v", name, p)
	}
}

// read selects the columns by opt, decodes only those, and converts them
// with store.ReadRecords.
func read(rdr *file.Reader, name string, opt store.TableOptions) (t *store.Table, err error) {
	defer recoverMalformed(name, &err)
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: BatchRows, Parallel: opt.Workers > 1}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	schema, err := fr.Schema()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	fields := schema.Fields()
	columns := make([]string, len(fields))
	for j, f := range fields {
		columns[j] = f.Name
	}
	label, features, err := store.SelectColumns(name, columns, opt)
	if err != nil {
		return nil, err
	}
	// Project onto the selected columns, by name, so that the order of
	// the decoded columns does not matter.
	sel := store.TableOptions{Features: make([]string, len(features)), MapDir: opt.MapDir, NumericHint: opt.NumericHint}
	var leaves []int
	add := func(j int) error {
		sf := fr.Manifest.Fields[j]
		switch {
		case !sf.IsLeaf() && j == label:
			return fmt.Errorf("%s: label column %s: type %s is not supported; want integers, floats or strings", name, store.Quote(columns[j]), fields[j].Type)
		case !sf.IsLeaf():
			return fmt.Errorf("%s: column %s: type %s is not numeric; %s", name, store.Quote(columns[j]), fields[j].Type, opt.Hint())
		}
		leaves = append(leaves, sf.ColIndex)
		return nil
	}
	for i, j := range features {
		sel.Features[i] = columns[j]
		if err := add(j); err != nil {
			return nil, err
		}
	}
	if label >= 0 {
		sel.Label = columns[label]
		if err := add(label); err != nil {
			return nil, err
		}
	}
	if rdr.NumRows() == 0 {
		return nil, fmt.Errorf("%s: no data rows", name)
	}
	rr, err := fr.GetRecordReader(context.Background(), leaves, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer rr.Release()
	return store.ReadRecords(rr, name, sel)
}

// NewWriter returns a Parquet writer of schema to w with the properties
// described in the package documentation. The caller writes record batches
// with its Write method and must Close it, which writes the footer.
func NewWriter(w io.Writer, schema *arrow.Schema) (*pqarrow.FileWriter, error) {
	props := parquet.NewWriterProperties(
		parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(RowGroupRows),
		parquet.WithCreatedBy("ssnmf"),
	)
	return pqarrow.NewFileWriter(schema, w, props, pqarrow.NewArrowWriterProperties())
}

// WriteMembership writes W (n×k, row-major) as a Parquet file with the
// columns of store.MembershipSchema(k): id (int64), w1..wk (float64),
// cluster (int32) and confidence (float64), all required (no nulls). It has the shape of
// store.WriteMembershipCSV and store.WriteMembershipArrow.
func WriteMembership(w io.Writer, W []float64, n, k int) error {
	if k < 1 || n < 0 || len(W) != n*k {
		return fmt.Errorf("write memberships: W has %d values, want n×k = %d×%d", len(W), n, k)
	}
	pw, err := NewWriter(w, store.MembershipSchema(k))
	if err != nil {
		return fmt.Errorf("write memberships: %w", err)
	}
	if err := store.MembershipBatches(W, n, k, pw.Write); err != nil {
		return fmt.Errorf("write memberships: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("write memberships: %w", err)
	}
	return nil
}
