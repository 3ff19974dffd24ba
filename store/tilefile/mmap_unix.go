//go:build unix

package tilefile

import (
	"os"
	"syscall"
)

// mapReadOnly maps the whole of f read-only. An empty file maps to nil.
func mapReadOnly(f *os.File, size int) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	return b, nil
}

func unmap(b []byte) error {
	if b == nil {
		return nil
	}
	return os.NewSyscallError("munmap", syscall.Munmap(b))
}
