//go:build !unix

package store

import "os"

// mapFile emulates a shared read-write mapping of the first size bytes of f
// on systems without mmap by reading them into memory. The memory is
// allocated as []uint64 so that the data at offset 4096 is aligned for
// float64. Changes reach the file only through syncMap and unmapFile.
func mapFile(f *os.File, size int) ([]byte, error) {
	b := AsBytes(make([]uint64, (size+7)/8))[:size]
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, err
	}
	return b, nil
}

// mapReadOnly reads the first size bytes of f into memory aligned for
// float64, on systems without mmap.
func mapReadOnly(f *os.File, size int) ([]byte, error) { return mapFile(f, size) }

// unmapReadOnly does nothing: the memory of mapReadOnly is garbage collected.
func unmapReadOnly([]byte) error { return nil }

// unmapFile writes b back to f.
func unmapFile(f *os.File, b []byte) error {
	_, err := f.WriteAt(b, 0)
	return err
}

// syncMap writes b back to f and flushes f to stable storage.
func syncMap(f *os.File, b []byte) error {
	if _, err := f.WriteAt(b, 0); err != nil {
		return err
	}
	return f.Sync()
}
