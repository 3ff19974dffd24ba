//go:build !unix

package tilefile

import (
	"os"
	"unsafe"
)

// mapReadOnly reads f into 8-byte aligned memory on systems without mmap.
func mapReadOnly(f *os.File, size int) ([]byte, error) {
	words := make([]uint64, (size+7)/8)
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, err
	}
	return b, nil
}

func unmap([]byte) error { return nil }
