// Package input opens a table of points in any format the tool reads: CSV
// (plain or gzip-compressed), Parquet or Arrow IPC (file or stream), found
// from the file's first bytes, then its extension. It is the one place
// where a format is recognized, for the inputs of "ssnmf solve" and the
// edge lists of a sparse affinity alike.
package input

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/parquetio"
)

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

// Detect returns the format of the file at path for Auto: by
// its leading bytes if they are Parquet's ("PAR1") or an Arrow IPC file's
// ("ARROW1"), else by its extension (.parquet and .pq; .arrow, .arrows,
// .ipc and .feather, read as an IPC file or stream by their bytes),
// else CSV, which may be gzip-compressed.
func Detect(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading input: %w", err)
	}
	defer f.Close()
	head := make([]byte, 6)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("PAR1")):
		return Parquet, nil
	case bytes.HasPrefix(head, []byte("ARROW1")):
		return Arrow, nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".pq":
		return Parquet, nil
	case ".arrow", ".arrows", ".ipc", ".feather":
		return Arrow, nil
	}
	return CSV, nil
}

// Open reads the table at path in format (a value of ParseFormat; "" is
// Auto), choosing columns by opt. If workdir is not empty the
// features are written, as the input is read, to the float64 matrix file
// workdir/features.mat (store.FeaturesFile) and the table maps it, so that
// a large input is converted once and never held in memory twice; the
// caller must then Close the table. Parquet and Arrow inputs are read one
// record batch at a time; a CSV input one record at a time.
func Open(path, format string, opt store.TableOptions, workdir string) (*store.Table, error) {
	format, err := ParseFormat(format)
	if err != nil {
		return nil, err
	}
	if format == Auto {
		if format, err = Detect(path); err != nil {
			return nil, err
		}
	}
	opt.MapDir = workdir
	switch format {
	case Parquet:
		return parquetio.Read(path, opt)
	case Arrow:
		return store.ReadArrow(path, opt)
	default:
		return store.ReadCSV(path, opt)
	}
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
