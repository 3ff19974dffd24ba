// Package input opens a table of points in any format the tool reads: CSV
// (plain or gzip-compressed), Parquet or Arrow IPC (file or stream), found
// from the file's first bytes, then its extension. It is the one place
// where a format is recognized, for the inputs of "ssnmf solve" and the
// edge lists of a sparse affinity alike, and, by the name's extension, the
// format of an output (OutputFormat), in which WriteMemberships writes
// the memberships W.
package input

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/parquetio"
)

// An Error is the error of an input that cannot be read as a table (a
// missing file, a format it is not, a bad row: the reader's error), which
// a caller that goes on to work on the table (model.PredictFile,
// solver.Options.Open) returns wrapped so, that its own errors are told
// apart from the input's.
type Error struct{ Err error }

// Error returns the text of the error that e wraps.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the error that e wraps.
func (e *Error) Unwrap() error { return e.Err }

// Formats, the values of a -format flag.
const (
	Auto    = "auto"
	CSV     = "csv"
	Arrow   = "arrow"
	Parquet = "parquet"
)

// Formats lists the formats ParseFormat accepts, for usage and errors.
const Formats = "auto, csv, arrow or parquet"

// ParseFormat checks the name of a format; "" means Auto, and "ipc" and
// "feather" mean Arrow.
func ParseFormat(s string) (string, error) {
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case "":
		return Auto, nil
	case Auto, CSV, Arrow, Parquet:
		return s, nil
	case "ipc", "feather":
		return Arrow, nil
	}
	return "", fmt.Errorf("unknown format %q, want %s", s, Formats)
}

// headLen is the number of leading bytes that tell the formats apart.
const headLen = 8

// Detect returns the format of the file at path for Auto, as Open finds
// it: by its leading bytes if they are Parquet's ("PAR1"), an Arrow IPC
// file's ("ARROW1") or an Arrow IPC stream's (its continuation marker FF
// FF FF FF, never in UTF-8 text), else by its extension (.parquet and .pq;
// .arrow, .arrows, .ipc and .feather, read as an IPC file or stream by
// their bytes), else CSV, which may be gzip-compressed. The file must be a
// regular file (see RequireFile): the bytes of a pipe would be consumed.
func Detect(path string) (string, error) {
	if err := RequireFile(path, "its format is found from its first bytes before it is read"); err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading input: %w", err)
	}
	defer f.Close()
	head := make([]byte, headLen)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return sniff(head[:n], path), nil
}

// sniff returns the format of an input, for Auto, from its first bytes
// and its name.
func sniff(head []byte, path string) string {
	switch {
	case bytes.HasPrefix(head, []byte("PAR1")):
		return Parquet
	case bytes.HasPrefix(head, []byte("ARROW1")), bytes.HasPrefix(head, []byte{0xFF, 0xFF, 0xFF, 0xFF}):
		return Arrow
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".pq":
		return Parquet
	case ".arrow", ".arrows", ".ipc", ".feather":
		return Arrow
	}
	return CSV
}

// RequireFile returns nil if path names a regular file, and otherwise an
// error that names it, says what it is (a pipe, a terminal or other
// device, a socket), why the reader needs a file (why), and to write it to
// a file first. A pipe, /dev/stdin among them, can be read only once, front
// to back.
func RequireFile(path, why string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("reading input: %w", err)
	}
	return regular(path, fi, why)
}

// regular is RequireFile for a file whose information is at hand.
func regular(path string, fi os.FileInfo, why string) error {
	switch {
	case fi.Mode().IsRegular():
		return nil
	case fi.IsDir():
		return fmt.Errorf("%s is a directory, not a file", path)
	}
	what := "not a regular file"
	switch m := fi.Mode(); {
	case m&os.ModeNamedPipe != 0:
		what = "a pipe"
	case m&os.ModeCharDevice != 0:
		what = "a terminal or character device"
	case m&os.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Errorf("%s is %s, which can be read only once, front to back, but %s: write it to a file first and give that file", path, what, why)
}

// Open reads the table at path in format (a value of ParseFormat; "" is
// Auto), choosing columns by opt. If workdir is not empty the
// features are written, as the input is read, to the float64 matrix file
// workdir/features.mat (store.FeaturesFile) and the table maps it, so that
// a large input is converted once and never held in memory twice; the
// caller must then Close the table. Parquet and Arrow inputs are read one
// record batch at a time; a CSV input one record at a time.
//
// The file is opened once. An input that is not a regular file (a pipe,
// /dev/stdin, a FIFO) is read front to back through one buffer, its format
// found from the buffered first bytes: CSV and Arrow IPC (a stream, or a
// file read as the stream it holds) are read so; Parquet, read from its
// footer, is refused with an error that says to write it to a file first.
func Open(path, format string, opt store.TableOptions, workdir string) (*store.Table, error) {
	format, err := ParseFormat(format)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading input: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	opt.MapDir = workdir
	if fi.Mode().IsRegular() {
		return openFile(f, path, format, opt)
	}
	return openStream(f, fi, path, format, opt)
}

// openFile reads the table in the regular file f, at path, whose format
// its first bytes give if format is Auto.
func openFile(f *os.File, path, format string, opt store.TableOptions) (*store.Table, error) {
	given := format != Auto
	if !given {
		head := make([]byte, headLen)
		n, err := f.ReadAt(head, 0)
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		format = sniff(head[:n], path)
	}
	switch format {
	case Parquet:
		return parquetio.ReadFrom(f, path, opt)
	case Arrow:
		return store.ReadArrowFrom(f, path, opt)
	}
	t, err := store.ParseCSV(f, path, opt)
	return csvAdvice(t, err, given)
}

// openStream reads the table in f, at path, a pipe or another file that
// cannot seek, front to back through one buffer, whose first bytes give
// the format if format is Auto.
func openStream(f *os.File, fi os.FileInfo, path, format string, opt store.TableOptions) (*store.Table, error) {
	given := format != Auto
	br := bufio.NewReaderSize(f, 1<<20)
	if !given {
		head, err := br.Peek(headLen)
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		format = sniff(head, path)
	}
	switch format {
	case Parquet:
		return nil, regular(path, fi, "Parquet is read from its footer, at the end of the file")
	case Arrow:
		return store.ReadArrowSequential(br, path, opt)
	}
	t, err := store.ParseCSV(br, path, opt)
	return csvAdvice(t, err, given)
}

// csvAdvice returns the table and error of a CSV read, adding to an error
// about a binary file that -format reads another format, unless the format
// was given.
func csvAdvice(t *store.Table, err error, given bool) (*store.Table, error) {
	var nt *store.NotTextError
	if !given && errors.As(err, &nt) {
		err = fmt.Errorf("%w, or give -format arrow or -format parquet if it is one of those", err)
	}
	return t, err
}

// ArrowColumns returns the column names of the Arrow IPC file at path, from
// its schema alone.
func ArrowColumns(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	names := make([]string, r.Schema().NumFields())
	for i, fd := range r.Schema().Fields() {
		names[i] = fd.Name
	}
	return names, nil
}
