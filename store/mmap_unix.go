//go:build unix

package store

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-write and shared, so that
// stores into the returned slice reach the file.
func mapFile(f *os.File, size int) ([]byte, error) {
	return mmap(f, size, syscall.PROT_READ|syscall.PROT_WRITE)
}

// mapReadOnly maps the first size bytes of f read-only and shared.
func mapReadOnly(f *os.File, size int) ([]byte, error) {
	return mmap(f, size, syscall.PROT_READ)
}

// mmap maps the first size bytes of f shared, with protection prot.
func mmap(f *os.File, size, prot int) ([]byte, error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, size, prot, syscall.MAP_SHARED)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	return b, nil
}

// unmapFile releases a mapping made by mapFile. The kernel writes dirty
// pages back to f in its own time.
func unmapFile(f *os.File, b []byte) error {
	return unmapReadOnly(b)
}

// unmapReadOnly releases a mapping made by mmap.
func unmapReadOnly(b []byte) error {
	if err := syscall.Munmap(b); err != nil {
		return os.NewSyscallError("munmap", err)
	}
	return nil
}
