package store

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// WriteFileAtomic writes a file by calling write on a temporary file in the
// same directory, fsyncs it, and renames it over path; on any error the
// temporary file is removed and an existing file at path is left untouched.
// The writer passed to write is buffered. The new file has mode 0644.
func WriteFileAtomic(path string, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close() // may already be closed; the error does not matter
			os.Remove(tmp)
			err = fmt.Errorf("writing %s: %w", path, err)
		}
	}()

	bw := bufio.NewWriterSize(f, 64<<10)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	// The rename is durable only once the directory is synced. The file
	// itself is complete either way, so a failure here is not reported.
	syncDir(dir)
	return nil
}

// WriteMembershipCSV writes W (n×k, row-major) as CSV with header
// w1..wk,cluster; cluster is the 0-based argmax of the row, ties to the
// lowest index; floats formatted with strconv.FormatFloat(v, 'g', -1, 64) so
// they read back bit-exactly.
func WriteMembershipCSV(w io.Writer, W []float64, n, k int) error {
	if n < 0 || k < 1 {
		return fmt.Errorf("membership matrix: invalid dimensions %d×%d", n, k)
	}
	if n > math.MaxInt/k || len(W) != n*k {
		return fmt.Errorf("membership matrix: %d values for %d×%d", len(W), n, k)
	}
	bw := bufio.NewWriter(w)
	line := make([]byte, 0, 32*(k+1))
	for j := range k {
		line = append(line, 'w')
		line = strconv.AppendInt(line, int64(j+1), 10)
		line = append(line, ',')
	}
	line = append(line, "cluster\n"...)
	bw.Write(line) // bufio.Writer keeps any error for Flush
	for i := range n {
		row := W[i*k : (i+1)*k]
		line = line[:0]
		for _, v := range row {
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
			line = append(line, ',')
		}
		line = strconv.AppendInt(line, int64(Argmax(row)), 10)
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			break // bufio.Writer keeps the error for Flush
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("membership matrix: %w", err)
	}
	return nil
}

// Argmax returns the index of the largest entry of row, the lowest index on
// ties. NaN entries are never chosen unless every entry is NaN, in which case
// Argmax returns 0. Argmax returns -1 if row is empty.
func Argmax(row []float64) int {
	best := -1
	for i, v := range row {
		if math.IsNaN(v) {
			continue
		}
		if best < 0 || v > row[best] {
			best = i
		}
	}
	if best < 0 && len(row) > 0 {
		return 0
	}
	return best
}
