package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"unsafe"
)

// MatrixMagic begins every matrix file.
const MatrixMagic = "SSNMFMAT"

// Matrix file layout; see the package documentation.
const (
	matrixVersion    = 1
	kindFloat64      = 1
	matrixHeaderSize = 4096 // the header page; also the data offset
	matrixCRCOffset  = 40   // the checksum covers bytes [0, matrixCRCOffset)
	matrixHeaderLen  = matrixCRCOffset + 4
	float64Size      = 8
)

// matrixHeader holds the fields of a matrix file header.
type matrixHeader struct {
	version uint32
	kind    uint32
	rows    uint64
	cols    uint64
	offset  uint64
	crc     uint32
}

// encodeMatrixHeader returns the header page for h, computing its checksum.
// It does not validate h, so that tests can write malformed headers.
func encodeMatrixHeader(h matrixHeader) []byte {
	b := make([]byte, matrixHeaderSize)
	copy(b, MatrixMagic)
	binary.LittleEndian.PutUint32(b[8:], h.version)
	binary.LittleEndian.PutUint32(b[12:], h.kind)
	binary.LittleEndian.PutUint64(b[16:], h.rows)
	binary.LittleEndian.PutUint64(b[24:], h.cols)
	binary.LittleEndian.PutUint64(b[32:], h.offset)
	SealHeader(b, matrixCRCOffset)
	return b
}

// parseMatrixHeader decodes and validates the header at the start of b,
// which may be any length. On success the header describes a matrix of at
// least one element whose file length, 4096 + rows·cols·8, fits in an int.
// It never panics.
func parseMatrixHeader(b []byte) (matrixHeader, error) {
	var h matrixHeader
	if err := CheckHeader(b, MatrixMagic, matrixCRCOffset); err != nil {
		return h, err
	}
	h.version = binary.LittleEndian.Uint32(b[8:])
	h.kind = binary.LittleEndian.Uint32(b[12:])
	h.rows = binary.LittleEndian.Uint64(b[16:])
	h.cols = binary.LittleEndian.Uint64(b[24:])
	h.offset = binary.LittleEndian.Uint64(b[32:])
	h.crc = binary.LittleEndian.Uint32(b[matrixCRCOffset:])
	if h.version != matrixVersion {
		return h, fmt.Errorf("unknown format version %d, want %d", h.version, matrixVersion)
	}
	if h.kind != kindFloat64 {
		return h, fmt.Errorf("unknown element kind %d, want %d (float64)", h.kind, kindFloat64)
	}
	if h.offset != matrixHeaderSize {
		return h, fmt.Errorf("data offset %d, want %d", h.offset, matrixHeaderSize)
	}
	if h.rows < 1 || h.cols < 1 {
		return h, fmt.Errorf("invalid dimensions %d×%d", h.rows, h.cols)
	}
	if _, ok := fileSize(h.rows, h.cols); !ok {
		return h, fmt.Errorf("dimensions %d×%d overflow", h.rows, h.cols)
	}
	return h, nil
}

// fileSize returns the length of a matrix file with the given dimensions, and
// false if that length or the element count does not fit in an int.
func fileSize(rows, cols uint64) (int, bool) {
	const maxData = math.MaxInt - matrixHeaderSize
	if rows == 0 || cols == 0 {
		return matrixHeaderSize, true
	}
	if rows > maxData/float64Size/cols {
		return 0, false
	}
	return matrixHeaderSize + int(rows*cols*float64Size), true
}

// checkHost reports an error if the host cannot use the matrix format in place.
func checkHost() error {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return errors.New("memory-mapped matrices require a little-endian host")
	}
	return nil
}

// Matrix is a rows×cols float64 matrix, row-major, backed by a memory-mapped
// file. A Matrix must be closed when no longer needed; slices obtained from
// it must not be used after Close. A Matrix is not safe for concurrent Sync
// and Close, but any number of goroutines may read and write disjoint
// elements concurrently, as with any slice.
type Matrix struct {
	path string
	f    *os.File
	mem  []byte    // the whole file, header page included
	data []float64 // mem[matrixHeaderSize:] viewed as float64
	rows int
	cols int
}

// CreateMatrix creates a zero-filled rows×cols matrix file at path, truncating
// any existing file, and maps it read-write. Both dimensions must be at least 1.
// The file's space is reserved first ([Reserve]): a full disk is an error
// here, never a fault of the mapping.
func CreateMatrix(path string, rows, cols int) (*Matrix, error) {
	if err := checkHost(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if rows < 1 || cols < 1 {
		return nil, fmt.Errorf("%s: invalid matrix dimensions %d×%d", path, rows, cols)
	}
	size, ok := fileSize(uint64(rows), uint64(cols))
	if !ok {
		return nil, fmt.Errorf("%s: matrix dimensions %d×%d overflow", path, rows, cols)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating matrix: %w", err)
	}
	m, err := func() (*Matrix, error) {
		hdr := encodeMatrixHeader(matrixHeader{
			version: matrixVersion,
			kind:    kindFloat64,
			rows:    uint64(rows),
			cols:    uint64(cols),
			offset:  matrixHeaderSize,
		})
		if _, err := f.WriteAt(hdr, 0); err != nil {
			return nil, err
		}
		// The data are zeros, allocated now (not a sparse file), so that a
		// full disk is this error and not a fault of the mapping later.
		if err := Reserve(f, int64(size)); err != nil {
			return nil, err
		}
		return newMatrix(path, f, size, rows, cols)
	}()
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("creating matrix: %w", err)
	}
	return m, nil
}

// OpenMatrix maps the existing matrix file at path read-write. It validates
// the header and checks that the file length matches the dimensions.
func OpenMatrix(path string) (*Matrix, error) {
	if err := checkHost(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("opening matrix: %w", err)
	}
	h, size, err := readMatrixHeader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	m, err := newMatrix(path, f, size, int(h.rows), int(h.cols))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening matrix: %w", err)
	}
	return m, nil
}

// readMatrixHeader reads and validates the header of the matrix file f, named
// path, and checks the file's length. It returns the header and that length.
func readMatrixHeader(f *os.File, path string) (matrixHeader, int, error) {
	fi, err := f.Stat()
	if err != nil {
		return matrixHeader{}, 0, fmt.Errorf("reading matrix header: %w", err)
	}
	if fi.Size() < matrixHeaderSize {
		return matrixHeader{}, 0, fmt.Errorf("%s: file is %d bytes, too short for the %d-byte matrix header",
			path, fi.Size(), matrixHeaderSize)
	}
	b := make([]byte, matrixHeaderSize)
	if _, err := f.ReadAt(b, 0); err != nil {
		return matrixHeader{}, 0, fmt.Errorf("reading matrix header: %w", err)
	}
	h, err := parseMatrixHeader(b)
	if err != nil {
		return h, 0, fmt.Errorf("%s: %w", path, err)
	}
	size, _ := fileSize(h.rows, h.cols)
	if fi.Size() != int64(size) {
		return h, 0, fmt.Errorf("%s: file is %d bytes, want %d for a %d×%d matrix (truncated or extended)",
			path, fi.Size(), size, h.rows, h.cols)
	}
	return h, size, nil
}

// newMatrix maps the first size bytes of f as a rows×cols matrix.
func newMatrix(path string, f *os.File, size, rows, cols int) (*Matrix, error) {
	mem, err := mapFile(f, size)
	if err != nil {
		return nil, err
	}
	n := rows * cols
	data := unsafe.Slice((*float64)(unsafe.Pointer(&mem[matrixHeaderSize])), n)
	return &Matrix{path: path, f: f, mem: mem, data: data, rows: rows, cols: cols}, nil
}

// Rows returns the number of rows.
func (m *Matrix) Rows() int { return m.rows }

// Cols returns the number of columns.
func (m *Matrix) Cols() int { return m.cols }

// Data returns the rows·cols elements in row-major order. The slice aliases
// the mapped file: stores into it change the file. It is nil after Close.
func (m *Matrix) Data() []float64 { return m.data }

// Row returns row i, which aliases the mapped file like [Matrix.Data].
// Row panics if i is out of range.
func (m *Matrix) Row(i int) []float64 {
	if i < 0 || i >= m.rows {
		panic("store: Matrix.Row index " + strconv.Itoa(i) + " out of range [0, " + strconv.Itoa(m.rows) + ")")
	}
	lo, hi := i*m.cols, (i+1)*m.cols
	return m.data[lo:hi:hi]
}

// Sync flushes the matrix to stable storage, as msync(2) with MS_SYNC does.
// It returns an error if the matrix is closed.
func (m *Matrix) Sync() error {
	if m.mem == nil {
		return fmt.Errorf("%s: sync of closed matrix", m.path)
	}
	if err := syncMap(m.f, m.mem); err != nil {
		return fmt.Errorf("%s: syncing matrix: %w", m.path, err)
	}
	return nil
}

// Close unmaps the matrix and closes its file. It does not flush the matrix
// to stable storage; call [Matrix.Sync] first for durability. Closing a
// closed matrix does nothing and returns nil.
func (m *Matrix) Close() error {
	if m.mem == nil {
		return nil
	}
	err := unmapFile(m.f, m.mem)
	m.mem, m.data = nil, nil
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	m.f = nil
	if err != nil {
		return fmt.Errorf("%s: closing matrix: %w", m.path, err)
	}
	return nil
}

// DumpMatrix writes a human-readable description of the matrix file at path
// to w: the header fields, then the first maxRows rows, or every row if
// maxRows is negative. It reads the file without mapping it and validates it
// as [OpenMatrix] does.
func DumpMatrix(w io.Writer, path string, maxRows int) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("dumping matrix: %w", err)
	}
	defer f.Close()
	h, size, err := readMatrixHeader(f, path)
	if err != nil {
		return err
	}
	rows, cols := int(h.rows), int(h.cols)
	if maxRows < 0 || maxRows > rows {
		maxRows = rows
	}
	var buf []byte
	buf = fmt.Appendf(buf, "magic    %s\n", MatrixMagic)
	buf = fmt.Appendf(buf, "version  %d\n", h.version)
	buf = fmt.Appendf(buf, "kind     %d (float64)\n", h.kind)
	buf = fmt.Appendf(buf, "rows     %d\n", h.rows)
	buf = fmt.Appendf(buf, "cols     %d\n", h.cols)
	buf = fmt.Appendf(buf, "offset   %d\n", h.offset)
	buf = fmt.Appendf(buf, "crc32    0x%08x\n", h.crc)
	buf = fmt.Appendf(buf, "size     %d bytes\n", size)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	r := io.NewSectionReader(f, matrixHeaderSize, int64(size-matrixHeaderSize))
	raw := make([]byte, cols*float64Size)
	for i := range maxRows {
		if _, err := io.ReadFull(r, raw); err != nil {
			return fmt.Errorf("%s: reading row %d: %w", path, i, err)
		}
		buf = fmt.Appendf(buf[:0], "row %d:", i)
		for j := range cols {
			v := math.Float64frombits(binary.LittleEndian.Uint64(raw[j*float64Size:]))
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	if rest := rows - maxRows; rest > 0 {
		if _, err := fmt.Fprintf(w, "... %d more rows\n", rest); err != nil {
			return err
		}
	}
	return nil
}
