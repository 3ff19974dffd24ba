//go:build unix

package store

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-write and shared, so that
// stores into the returned slice reach the file.
func mapFile(f *os.File, size int) ([]byte, error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	return b, nil
}

// unmapFile releases a mapping made by mapFile. The kernel writes dirty
// pages back to f in its own time.
func unmapFile(f *os.File, b []byte) error {
	if err := syscall.Munmap(b); err != nil {
		return os.NewSyscallError("munmap", err)
	}
	return nil
}
