package input

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/parquetio"
)

// CSVGzip is the format of gzip-compressed CSV output, beside Parquet,
// Arrow and CSV.
const CSVGzip = "csv.gz"

// OutputFormat returns the format of an output by its name's extension:
// Parquet (.parquet), Arrow (.arrow), CSV (.csv) or CSVGzip (.csv.gz), in
// any case, or "" if none; CSV for an output written in place
// (store.WrittenInPlace: /dev/null, a terminal, a named pipe) whose name
// has none of them.
func OutputFormat(path string) string {
	lower := strings.ToLower(path)
	if strings.HasSuffix(lower, ".csv.gz") {
		return CSVGzip
	}
	switch filepath.Ext(lower) {
	case ".parquet":
		return Parquet
	case ".arrow":
		return Arrow
	case ".csv":
		return CSV
	}
	if store.WrittenInPlace(path) {
		return CSV
	}
	return ""
}

// TableFormat returns the format of an output of memberships or edges by
// its name's extension, as OutputFormat but without gzip: CSV, Arrow,
// Parquet, or "" if unknown.
func TableFormat(path string) string {
	switch f := OutputFormat(path); {
	case f != CSVGzip:
		return f
	case store.WrittenInPlace(path):
		return CSV
	}
	return ""
}

// WriteMemberships writes W (n×k, row-major) to w in the format of path's
// extension (TableFormat; CSV if unknown), with the columns of
// store.MembershipSchema.
func WriteMemberships(w io.Writer, path string, W []float64, n, k int) error {
	switch TableFormat(path) {
	case Arrow:
		return store.WriteMembershipArrow(w, W, n, k)
	case Parquet:
		return parquetio.WriteMembership(w, W, n, k)
	}
	return store.WriteMembershipCSV(w, W, n, k)
}
