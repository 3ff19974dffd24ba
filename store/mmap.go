package store

import (
	"os"
	"slices"
	"unsafe"
)

// MapReadOnly maps the first size bytes of f, open for reading, read-only
// and shared, for readers that view a file in place (such as the tile
// file). A size of 0 maps to nil. On systems without mmap it reads the bytes
// into memory aligned for float64 instead.
func MapReadOnly(f *os.File, size int) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	return mapReadOnly(f, size)
}

// UnmapReadOnly releases a mapping made by [MapReadOnly]; b must not be
// used after. Unmapping nil does nothing.
func UnmapReadOnly(b []byte) error {
	if b == nil {
		return nil
	}
	return unmapReadOnly(b)
}

// MapReadWrite maps the first size bytes of f, open for reading and
// writing, read-write and shared: stores into the slice are stores into
// the file's pages. A size of 0 maps to nil. On systems without mmap it
// reads the bytes into memory aligned for float64, and UnmapReadWrite
// writes them back.
func MapReadWrite(f *os.File, size int) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	return mapFile(f, size)
}

// UnmapReadWrite releases a mapping made by [MapReadWrite]; b must not be
// used after. The changes reach the file (f.Sync makes them durable).
// Unmapping nil does nothing.
func UnmapReadWrite(f *os.File, b []byte) error {
	if b == nil {
		return nil
	}
	return unmapFile(f, b)
}

// MapAnonymous returns size bytes of zeroed memory outside the Go heap,
// aligned for float64: memory that the collector neither scans nor counts
// (GOMEMLIMIT), and that, unlike a file's pages, the kernel never writes
// to disk, nor can drop under memory pressure (there is no file behind
// it). Working memory that is rewritten many times and fits in RAM goes
// there; what may not fit goes to a mapped file. A size of 0 maps to nil.
func MapAnonymous(size int) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	b, err := mapAnonymous(size)
	if err == nil {
		adviseHuge(b)
	}
	return b, err
}

// UnmapAnonymous releases memory of [MapAnonymous]; b must not be used
// after. Unmapping nil does nothing.
func UnmapAnonymous(b []byte) error {
	if b == nil {
		return nil
	}
	return unmapReadOnly(b)
}

// AdviseSequential tells the kernel that the pages of b, a mapping (of
// MapReadOnly or MapReadWrite, or a part of one), are read in order, pass
// after pass, as a sweep reads a graph: it reads further ahead, and
// reclaims the pages behind a pass before others, so that a
// larger-than-memory file streamed this way does not push out of the page
// cache the pages read at random between its passes (the solve's W). Only
// the pages wholly inside b are advised, so that the advice never reaches
// memory beside it. It changes no byte of b. Where a mapping is memory of
// the process (no mmap), it does nothing.
func AdviseSequential(b []byte) error { return adviseWhole(b, adviseSequential) }

// AdviseRandom tells the kernel that the pages of b, a mapping as for
// AdviseSequential, are about to be read at random: a page fault reads
// that page alone, not the pages around it, which a pass that visits
// rows in no order of the file would read in vain, and under memory
// pressure read again. AdviseSequential undoes it. It changes no byte of
// b, and does nothing where a mapping is memory of the process.
func AdviseRandom(b []byte) error { return adviseWhole(b, adviseRandom) }

// adviseWhole passes the whole pages of b to advise, if there are any.
func adviseWhole(b []byte, advise func([]byte) error) error {
	lo, hi := wholePages(uintptr(unsafe.Pointer(unsafe.SliceData(b))), len(b))
	if lo == hi {
		return nil
	}
	return advise(b[lo:hi])
}

// advicePage is the unit of AdviseSequential's pages: 4 KiB, or a part of a larger
// page, which madvise rounds out only at the end.
const advicePage = 4096

// wholePages returns the offsets [lo, hi) of the whole pages of the n
// bytes at address start; lo = hi if there is none.
func wholePages(start uintptr, n int) (lo, hi int) {
	lo = int((advicePage - start%advicePage) % advicePage)
	if n < lo+advicePage {
		return 0, 0
	}
	return lo, lo + (n-lo)/advicePage*advicePage
}

// AdviseNormal takes back AdviseRandom or AdviseSequential: the kernel
// reads ahead of faults on b's pages as it does by default.
func AdviseNormal(b []byte) error { return adviseWhole(b, adviseNormal) }

// GatherRows copies rows rows of x (p values each, row r at x[r*p:]) into
// dst, in the order given, with x's pages between the first and the last
// of them advised as read at random meanwhile (AdviseRandom, then
// AdviseNormal): where x is a mapped file larger than memory, a fault then
// reads its page alone, not the pages around it (as much as the device
// reads ahead, megabytes), which for rows far apart would read most of the
// file in vain. Advice changes no value: its error is of no consequence.
// It returns dst[:len(rows)*p].
func GatherRows(dst, x []float64, p int, rows []int) []float64 {
	dst = dst[:len(rows)*p]
	if len(rows) == 0 || p == 0 {
		return dst
	}
	lo, hi := slices.Min(rows), slices.Max(rows)
	span := AsBytes(x[lo*p : (hi+1)*p])
	_ = AdviseRandom(span)
	for k, r := range rows {
		copy(dst[k*p:(k+1)*p], x[r*p:(r+1)*p])
	}
	_ = AdviseNormal(span)
	return dst
}

// Prefetch asks the kernel to start reading the pages that b, a part of a
// mapping of a file, lies on, if they are not in the page cache, and
// returns without waiting for them. It changes no byte of b; on memory of
// the process it does nothing.
func Prefetch(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := start &^ (advicePage - 1)
	return prefetch(lo, start+uintptr(len(b))-lo)
}
