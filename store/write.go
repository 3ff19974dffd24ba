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

// AtomicFile is an output file written under a temporary name in the
// directory of its final path. Commit moves it into place with one rename;
// Abort removes it. Either way an earlier file at the path is never seen
// half written. Writes are buffered.
type AtomicFile struct {
	path string
	f    *os.File
	bw   *bufio.Writer
	done bool
}

// CreateAtomic starts writing the file at path. It fails at once if the
// directory of path does not exist or is not writable, or if path is a
// directory, so that a program can check its outputs before long work.
func CreateAtomic(path string) (*AtomicFile, error) {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("writing %s: %s is not a directory", path, dir)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("writing %s: is a directory", path)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &AtomicFile{path: path, f: f, bw: bufio.NewWriterSize(f, 64<<10)}, nil
}

// Write writes p to the temporary file.
func (a *AtomicFile) Write(p []byte) (int, error) { return a.bw.Write(p) }

// Commit flushes and syncs the file, gives it mode 0644 and renames it to
// its final path. If any step fails the temporary file is removed.
func (a *AtomicFile) Commit() error {
	if a.done {
		return fmt.Errorf("writing %s: already committed or aborted", a.path)
	}
	err := a.bw.Flush()
	if err == nil {
		err = a.f.Chmod(0o644)
	}
	if err == nil {
		err = a.f.Sync()
	}
	if err == nil {
		err = a.f.Close()
	}
	if err == nil {
		err = os.Rename(a.f.Name(), a.path)
	}
	if err != nil {
		a.Abort()
		return fmt.Errorf("writing %s: %w", a.path, err)
	}
	a.done = true
	// The rename is durable only once the directory is synced. The file
	// itself is complete either way, so a failure here is not reported.
	syncDir(filepath.Dir(a.path))
	return nil
}

// Abort removes the temporary file. It does nothing after Commit, so it can
// be deferred.
func (a *AtomicFile) Abort() {
	if a.done {
		return
	}
	a.done = true
	a.f.Close() // may already be closed; the error does not matter
	os.Remove(a.f.Name())
}

// WriteFileAtomic writes a file by calling write on an AtomicFile and
// committing it; on any error the temporary file is removed and an existing
// file at path is left untouched. The new file has mode 0644.
func WriteFileAtomic(path string, write func(w io.Writer) error) error {
	a, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	if err := write(a); err != nil {
		a.Abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return a.Commit()
}

// WriteMembershipCSV writes W (n×k, row-major) as CSV with header
// id,w1..wk,cluster,confidence: id is the 0-based row index, cluster the
// 0-based argmax of the row, ties to the lowest index, confidence the
// row's largest membership; floats are formatted with
// strconv.FormatFloat(v, 'g', -1, 64) so they read back bit-exactly.
func WriteMembershipCSV(w io.Writer, W []float64, n, k int) error {
	if err := checkMembership(W, n, k); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	line := make([]byte, 0, 32*(k+2))
	line = append(line, "id,"...)
	for j := range k {
		line = append(line, 'w')
		line = strconv.AppendInt(line, int64(j+1), 10)
		line = append(line, ',')
	}
	line = append(line, "cluster,confidence\n"...)
	bw.Write(line) // bufio.Writer keeps any error for Flush
	for i := range n {
		row := W[i*k : (i+1)*k]
		line = strconv.AppendInt(line[:0], int64(i), 10)
		for _, v := range row {
			line = append(line, ',')
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
		}
		c := Argmax(row)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(c), 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, row[c], 'g', -1, 64)
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
