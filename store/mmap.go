package store

import "os"

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
	return mapAnonymous(size)
}

// UnmapAnonymous releases memory of [MapAnonymous]; b must not be used
// after. Unmapping nil does nothing.
func UnmapAnonymous(b []byte) error {
	if b == nil {
		return nil
	}
	return unmapReadOnly(b)
}

// AdviseSequential tells the kernel that the mapping b (of MapReadOnly or
// MapReadWrite) is read in order, pass after pass, as a sweep reads a
// graph: it reads ahead further, and reclaims the pages behind a pass
// before others. A larger-than-memory file streamed this way then does not
// push out of the page cache the pages that are read at random between
// its passes (the solve's W). Advising nil does nothing.
func AdviseSequential(b []byte) error {
	if b == nil {
		return nil
	}
	return adviseSequential(b)
}
