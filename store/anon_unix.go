//go:build unix

package store

import (
	"os"
	"syscall"
)

// mapAnonymous maps size bytes of zeroed private memory.
func mapAnonymous(size int) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	return b, nil
}
