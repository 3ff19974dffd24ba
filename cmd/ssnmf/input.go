package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/parquetio"
)

// Input formats, the values of -format.
const (
	formatAuto    = "auto"
	formatCSV     = "csv"
	formatArrow   = "arrow"
	formatParquet = "parquet"
)

// inputFormats lists the values -format accepts, for usage and errors.
const inputFormats = "auto, csv, arrow or parquet"

// parseInputFormat checks the value of -format; "" means auto.
func parseInputFormat(s string) (string, error) {
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case "":
		return formatAuto, nil
	case formatAuto, formatCSV, formatArrow, formatParquet:
		return s, nil
	case "ipc", "feather":
		return formatArrow, nil
	}
	return "", fmt.Errorf("unknown format %q, want %s", s, inputFormats)
}

// detectFormat returns the format of the file at path for -format auto: by
// its leading bytes if they are Parquet's ("PAR1") or an Arrow IPC file's
// ("ARROW1"), else by its extension (.parquet and .pq; .arrow, .arrows,
// .ipc and .feather, read as an IPC file or stream by their bytes),
// else CSV, which may be gzip-compressed.
func detectFormat(path string) (string, error) {
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
		return formatParquet, nil
	case bytes.HasPrefix(head, []byte("ARROW1")):
		return formatArrow, nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".pq":
		return formatParquet, nil
	case ".arrow", ".arrows", ".ipc", ".feather":
		return formatArrow, nil
	}
	return formatCSV, nil
}

// openInput reads the feature table at path in format (a value of -format;
// "" is auto), choosing columns by opt. If workdir is not empty the
// features are written, as the input is read, to the float64 matrix file
// workdir/features.mat (store.FeaturesFile) and the table maps it, so that
// a large input is converted once and never held in memory twice; the
// caller must then Close the table. Parquet and Arrow inputs are read one
// record batch at a time; a CSV input one record at a time.
func openInput(path, format string, opt store.TableOptions, workdir string) (*store.Table, error) {
	format, err := parseInputFormat(format)
	if err != nil {
		return nil, err
	}
	if format == formatAuto {
		if format, err = detectFormat(path); err != nil {
			return nil, err
		}
	}
	opt.MapDir = workdir
	switch format {
	case formatParquet:
		return parquetio.Read(path, opt)
	case formatArrow:
		return store.ReadArrow(path, opt)
	default:
		return store.ReadCSV(path, opt)
	}
}
