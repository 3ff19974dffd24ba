package store

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
)

// matrixWriter writes a matrix file whose number of rows is not known in
// advance: rows are appended through a buffer, and the header, which holds
// the row count, is written last. Only the buffer is held in memory, so a
// feature table of any size can be converted from a stream of record
// batches and then mapped.
type matrixWriter struct {
	path string
	f    *os.File
	bw   *bufio.Writer
	cols int
	n    int // values written
	buf  []byte
}

// newMatrixWriter creates the file at path, replacing any file there, for a
// matrix of cols columns.
func newMatrixWriter(path string, cols int) (*matrixWriter, error) {
	if err := checkHost(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if cols < 1 {
		return nil, fmt.Errorf("%s: invalid matrix width %d", path, cols)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating matrix: %w", err)
	}
	// The header page is written as zeros now, so that a file left behind
	// by a crash fails OpenMatrix's magic check, and filled in by finish.
	if _, err := f.Seek(matrixHeaderSize, 0); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("creating matrix: %w", err)
	}
	return &matrixWriter{path: path, f: f, bw: bufio.NewWriterSize(f, 1<<20), cols: cols, buf: make([]byte, 0, 1<<16)}, nil
}

// write appends values, a whole number of rows, in row-major order.
func (m *matrixWriter) write(x []float64) error {
	for len(x) > 0 {
		chunk := x[:min(len(x), cap(m.buf)/float64Size)]
		b := m.buf[:len(chunk)*float64Size]
		for i, v := range chunk {
			binary.LittleEndian.PutUint64(b[i*float64Size:], math.Float64bits(v))
		}
		if _, err := m.bw.Write(b); err != nil {
			return fmt.Errorf("%s: writing features: %w", m.path, err)
		}
		m.n += len(chunk)
		x = x[len(chunk):]
	}
	return nil
}

// abort closes and removes the file.
func (m *matrixWriter) abort() {
	m.f.Close()
	os.Remove(m.path)
}

// finish writes the header and maps the matrix. At least one row must have
// been written. On error the file is removed.
func (m *matrixWriter) finish() (*Matrix, error) {
	rows := m.n / m.cols
	if rows < 1 || m.n%m.cols != 0 {
		m.abort()
		return nil, fmt.Errorf("%s: %d values do not make whole rows of %d", m.path, m.n, m.cols)
	}
	size, ok := fileSize(uint64(rows), uint64(m.cols))
	if !ok {
		m.abort()
		return nil, fmt.Errorf("%s: matrix dimensions %d×%d overflow", m.path, rows, m.cols)
	}
	hdr := encodeMatrixHeader(matrixHeader{
		version: matrixVersion,
		kind:    kindFloat64,
		rows:    uint64(rows),
		cols:    uint64(m.cols),
		offset:  matrixHeaderSize,
	})
	err := m.bw.Flush()
	if err == nil {
		_, err = m.f.WriteAt(hdr, 0)
	}
	var mat *Matrix
	if err == nil {
		mat, err = newMatrix(m.path, m.f, size, rows, m.cols)
	}
	if err != nil {
		m.abort()
		return nil, fmt.Errorf("%s: writing features: %w", m.path, err)
	}
	return mat, nil
}
