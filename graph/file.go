package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"unsafe"

	"github.com/ssnmf/ssnmf/store"
)

// CSR file layout; see the package documentation.
const (
	fileMagic      = "SSNMFCSR"
	fileVersion    = 1
	fileHeaderSize = 4096 // the header page; the arrays start after it
	fileCRCOffset  = 44   // the header checksum covers bytes [0, fileCRCOffset)
)

// castagnoli is the CRC-32C table of the body checksum.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fileHeader holds the fields of a CSR file header.
type fileHeader struct {
	version uint32
	n, nnz  uint64
	source  uint64 // what the graph was built from, the builder's tag
	body    uint32 // CRC-32C of the arrays
}

// fileSize returns the length of a CSR file of n rows and nnz entries, and
// false if it does not fit in an int.
func fileSize(n, nnz uint64) (int, bool) {
	const limit = math.MaxInt/2 - fileHeaderSize
	if n >= limit/8 || nnz >= limit/12 || 8*(n+1)+12*nnz >= limit {
		return 0, false
	}
	return fileHeaderSize + int(8*(n+1)+12*nnz), true
}

func encodeFileHeader(h fileHeader) []byte {
	b := make([]byte, fileHeaderSize)
	copy(b, fileMagic)
	binary.LittleEndian.PutUint32(b[8:], h.version)
	binary.LittleEndian.PutUint64(b[12:], h.n)
	binary.LittleEndian.PutUint64(b[20:], h.nnz)
	binary.LittleEndian.PutUint64(b[28:], h.source)
	binary.LittleEndian.PutUint32(b[36:], h.body)
	// b[40:44] reserved, zero.
	store.SealHeader(b, fileCRCOffset)
	return b
}

// parseFileHeader decodes and checks the header at the start of b, of any
// length. It never panics.
func parseFileHeader(b []byte) (fileHeader, error) {
	var h fileHeader
	if err := store.CheckHeader(b, fileMagic, fileCRCOffset); err != nil {
		return h, err
	}
	h.version = binary.LittleEndian.Uint32(b[8:])
	h.n = binary.LittleEndian.Uint64(b[12:])
	h.nnz = binary.LittleEndian.Uint64(b[20:])
	h.source = binary.LittleEndian.Uint64(b[28:])
	h.body = binary.LittleEndian.Uint32(b[36:])
	if h.version != fileVersion {
		return h, fmt.Errorf("unknown format version %d, want %d", h.version, fileVersion)
	}
	if h.n < 1 || h.n > math.MaxInt32 {
		return h, fmt.Errorf("%d rows, want 1 to %d", h.n, math.MaxInt32)
	}
	if _, ok := fileSize(h.n, h.nnz); !ok {
		return h, fmt.Errorf("%d rows and %d entries overflow", h.n, h.nnz)
	}
	return h, nil
}

// view returns the n values of type T at byte offset off of b, in place.
func view[T int64 | int32 | float64](b []byte, off, n int) []T {
	if n == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[off])), n)
}

// arrays returns the three arrays of a CSR file of n rows and nnz entries
// mapped at mem.
func arrays(mem []byte, n, nnz int) (rowPtr []int64, val []float64, col []int32) {
	off := fileHeaderSize
	rowPtr = view[int64](mem, off, n+1)
	off += 8 * (n + 1)
	val = view[float64](mem, off, nnz)
	off += 8 * nnz
	col = view[int32](mem, off, nnz)
	return rowPtr, val, col
}

// mapping is the memory-mapped file behind a CSR.
type mapping struct {
	f   *os.File
	mem []byte
}

// OpenFile maps the CSR file at path read-only and returns its matrix and
// the tag its builder gave (the source). It checks the header, the file's
// length, the checksum of the arrays, and the matrix itself as NewCSR does;
// every failure is an error naming the file. Close releases the mapping.
func OpenFile(path string) (*CSR, uint64, error) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return nil, 0, fmt.Errorf("%s: CSR files are used in place, on little-endian hosts only", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	m, src, err := openMapped(f)
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return m, src, nil
}

func openMapped(f *os.File) (*CSR, uint64, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	head := make([]byte, fileCRCOffset+4)
	if k, _ := f.ReadAt(head, 0); k < len(head) {
		head = head[:k]
	}
	h, err := parseFileHeader(head)
	if err != nil {
		return nil, 0, err
	}
	size, _ := fileSize(h.n, h.nnz)
	if fi.Size() != int64(size) {
		return nil, 0, fmt.Errorf("file is %d bytes, want %d for %d rows and %d entries", fi.Size(), size, h.n, h.nnz)
	}
	mem, err := mapArrays(f, size)
	if err != nil {
		return nil, 0, err
	}
	m, got, err := checkArrays(mem, int(h.n), int(h.nnz), 1)
	switch {
	case got != h.body:
		err = fmt.Errorf("bad checksum of the arrays 0x%08x, computed 0x%08x", h.body, got)
	case err == nil:
		m.file = &mapping{f: f, mem: mem}
		return m, h.source, nil
	}
	store.UnmapReadOnly(mem)
	return nil, 0, err
}

// mapArrays maps the first size bytes of the CSR file f read-only, advised
// as read in order (store.AdviseSequential): every pass over a graph reads
// its rows in order. The advice is only that: a kernel that refuses it
// reads the file as it would have.
func mapArrays(f *os.File, size int) ([]byte, error) {
	mem, err := store.MapReadOnly(f, size)
	if err == nil {
		_ = store.AdviseSequential(mem)
	}
	return mem, err
}

// AdviseRandom tells the kernel that the rows of m, mapped from a CSR
// file, are about to be read in no order of the file (store.AdviseRandom),
// or, with random false, in order again, as mapped
// (store.AdviseSequential). It changes no value of m; for a matrix in
// memory it does nothing.
func (m *CSR) AdviseRandom(random bool) error {
	switch {
	case m.file == nil:
		return nil
	case random:
		return store.AdviseRandom(m.file.mem)
	}
	return store.AdviseSequential(m.file.mem)
}

// InFile reports whether m's arrays are mapped from a CSR file.
func (m *CSR) InFile() bool { return m.file != nil }

// FetchRows asks for the pages of the entries of the given rows, in
// increasing order (store.Prefetch): where m's arrays are mapped from a
// file, their reads start at once, all together, and the call returns, so
// that rows then read in no order of the file do not wait for them a
// fault at a time. Rows whose entries are within a page of each other are
// asked for together. It changes no value of m; for arrays in memory it
// costs a system call a run of rows and does nothing, so callers ask only
// for a matrix in a file (InFile, or arrays of their own in one).
func (m *CSR) FetchRows(rows []int32) {
	if len(rows) == 0 {
		return
	}
	const near = 512 // entries: a page of values
	ask := func(lo, hi int64) {
		_ = store.Prefetch(store.AsBytes(m.Val[lo:hi])) // advice: a refusal changes nothing
		_ = store.Prefetch(store.AsBytes(m.Col[lo:hi]))
	}
	lo, hi := m.RowPtr[rows[0]], m.RowPtr[rows[0]+1]
	for _, i := range rows[1:] {
		a, b := m.RowPtr[i], m.RowPtr[i+1]
		if a <= hi+near {
			hi = max(hi, b)
			continue
		}
		ask(lo, hi)
		lo, hi = a, b
	}
	ask(lo, hi)
}

// checkArrays checks the arrays of a CSR file of n rows and nnz entries
// mapped at mem as NewCSR does, and returns the matrix and the CRC-32C of
// the arrays, both from one pass over them in order: the row offsets, then
// the values and columns of each range of entries as they are checked
// (their checksums joined by crc32cJoin). Where the check fails, the
// checksum is still that of all the arrays, so that a damaged file is
// reported as such rather than by the entry the damage broke.
func checkArrays(mem []byte, n, nnz, workers int) (*CSR, uint32, error) {
	rowPtr, val, col := arrays(mem, n, nnz)
	valAt := fileHeaderSize + 8*(n+1)
	colAt := valAt + 8*nnz
	head := crc32.Checksum(mem[fileHeaderSize:valAt], castagnoli)
	var vals, cols uint32
	var done int64
	m, err := checkCSR(rowPtr, col, val, workers, func(lo, hi int64) {
		vals = crc32.Update(vals, castagnoli, mem[valAt+8*int(lo):valAt+8*int(hi)])
		cols = crc32.Update(cols, castagnoli, mem[colAt+4*int(lo):colAt+4*int(hi)])
		done = hi
	})
	if err != nil {
		vals = crc32.Update(vals, castagnoli, mem[valAt+8*int(done):colAt])
		cols = crc32.Update(cols, castagnoli, mem[colAt+4*int(done):])
	}
	sum := crc32cJoin(crc32cJoin(head, vals, 8*int64(nnz)), cols, 4*int64(nnz))
	return m, sum, err
}

// crc32cJoin returns the CRC-32C of a‖b from a's CRC ca, b's CRC cb and
// b's length: ca, as the register of a CRC of a followed by size zero
// bytes, is multiplied by x^(8·size) modulo the polynomial, and cb added.
// (The conditioning of the CRC, its inverted start and end, cancels out.)
func crc32cJoin(ca, cb uint32, size int64) uint32 {
	// In the CRC's bit-reflected order, bit 31 is x⁰ and bit 23 is x⁸:
	// one byte. pow is x^(8·2^t) as the bits t of size are taken.
	prod, pow := uint32(1)<<31, uint32(1)<<23
	for ; size > 0; size >>= 1 {
		if size&1 != 0 {
			prod = gf2Mul(prod, pow)
		}
		pow = gf2Mul(pow, pow)
	}
	return gf2Mul(prod, ca) ^ cb
}

// gf2Mul multiplies two polynomials modulo CRC-32C's, both in the CRC's
// bit-reflected order.
func gf2Mul(a, b uint32) uint32 {
	const poly = 0x82f63b78 // Castagnoli's, reflected
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ poly
		} else {
			b >>= 1
		}
	}
	return p
}

// Close releases the file behind m, if any; m must not be used after.
// Closing a CSR built in memory does nothing.
func (m *CSR) Close() error {
	if m.file == nil {
		return nil
	}
	err := store.UnmapReadOnly(m.file.mem)
	err = errors.Join(err, m.file.f.Close())
	m.file = nil
	return err
}

// fileBuilder is a CSR file being written through a read-write mapping,
// sized for a capacity of entries: the arrays are filled in place, then
// compacted, and the file is cut to its final length and renamed into
// place by finish.
type fileBuilder struct {
	path, tmp string
	f         *os.File
	mem       []byte
	n, cap    int
	source    uint64
	workers   int // that check the file as it is finished
}

// createFile starts the CSR file path (written as path.tmp until finish)
// for n rows and up to capacity entries, and returns its row offsets and
// room for the columns and values.
func createFile(path string, n, capacity int, source uint64, workers int) (*fileBuilder, []int64, []int32, []float64, error) {
	size, ok := fileSize(uint64(n), uint64(capacity))
	if !ok || n < 1 {
		return nil, nil, nil, nil, fmt.Errorf("%s: %d rows and %d entries do not fit a CSR file", path, n, capacity)
	}
	fb := &fileBuilder{path: path, tmp: path + ".tmp", n: n, cap: capacity, source: source, workers: workers}
	f, err := os.OpenFile(fb.tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	fb.f = f
	if err := store.Reserve(f, int64(size)); err != nil {
		fb.abort()
		return nil, nil, nil, nil, err
	}
	if fb.mem, err = store.MapReadWrite(f, size); err != nil {
		fb.abort()
		return nil, nil, nil, nil, fmt.Errorf("%s: %w", fb.tmp, err)
	}
	rowPtr, val, col := arrays(fb.mem, n, capacity)
	return fb, rowPtr, col, val, nil
}

// abort removes the unfinished file.
func (fb *fileBuilder) abort() {
	if fb.mem != nil {
		store.UnmapReadWrite(fb.f, fb.mem)
		fb.mem = nil
	}
	fb.f.Close()
	os.Remove(fb.tmp)
}

// finish moves the columns of the nnz entries kept next to their values,
// checks the matrix as NewCSR does and takes the arrays' checksum in the
// same pass, writes the header, cuts the file to its length, renames it
// into place and maps it read-only: the graph is read once, not again by
// OpenFile.
func (fb *fileBuilder) finish(nnz int) (*CSR, error) {
	// The values stay where they are; the columns move down to follow the
	// nnz values kept (copy handles the overlap).
	if nnz != fb.cap {
		_, _, col := arrays(fb.mem, fb.n, fb.cap)
		_, _, dst := arrays(fb.mem, fb.n, nnz)
		copy(dst, col[:nnz])
	}
	size, _ := fileSize(uint64(fb.n), uint64(nnz))
	m, body, err := checkArrays(fb.mem[:size], fb.n, nnz, fb.workers)
	if err != nil {
		fb.abort()
		return nil, fmt.Errorf("%s: %w", fb.path, err)
	}
	h := fileHeader{version: fileVersion, n: uint64(fb.n), nnz: uint64(nnz), source: fb.source, body: body}
	copy(fb.mem, encodeFileHeader(h))
	err = store.UnmapReadWrite(fb.f, fb.mem)
	fb.mem = nil
	if err == nil {
		err = fb.f.Truncate(int64(size))
	}
	if err == nil {
		err = fb.f.Sync()
	}
	if err == nil {
		err = os.Rename(fb.tmp, fb.path)
	}
	var mem []byte
	if err == nil {
		mem, err = mapArrays(fb.f, size)
	}
	if err != nil {
		fb.abort()
		return nil, fmt.Errorf("%s: %w", fb.path, err)
	}
	m.RowPtr, m.Val, m.Col = arrays(mem, fb.n, nnz)
	m.file = &mapping{f: fb.f, mem: mem}
	return m, nil
}

// DumpFile prints the header of the CSR file at path and its first rows
// (up to maxRows, with at most 8 entries each), for debugging. It reports
// a bad header or length as an error after printing what it could read.
func DumpFile(w io.Writer, path string, maxRows int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, fileCRCOffset+4)
	k, _ := f.ReadAt(head, 0)
	h, err := parseFileHeader(head[:k])
	fmt.Fprintf(w, "%s: CSR file (magic %q)\n", path, head[:min(k, len(fileMagic))])
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	size, _ := fileSize(h.n, h.nnz)
	fmt.Fprintf(w, "version %d  rows %d  entries %d  source %016x  arrays crc32c %08x  length %d\n",
		h.version, h.n, h.nnz, h.source, h.body, size)
	fmt.Fprintf(w, "row offsets @%d  values @%d  columns @%d\n",
		fileHeaderSize, fileHeaderSize+8*(h.n+1), fileHeaderSize+8*(h.n+1)+8*h.nnz)
	m, _, err := OpenFile(path)
	if err != nil {
		return err
	}
	defer m.Close()
	for i := range min(maxRows, m.N()) {
		lo, hi := m.RowPtr[i], m.RowPtr[i+1]
		fmt.Fprintf(w, "row %d (%d entries):", i, hi-lo)
		for e := lo; e < min(hi, lo+8); e++ {
			fmt.Fprintf(w, " %d:%.6g", m.Col[e], m.Val[e])
		}
		if hi-lo > 8 {
			fmt.Fprint(w, " ...")
		}
		fmt.Fprintln(w)
	}
	return nil
}
