package store

import (
	"os"
	"syscall"
	"unsafe"
)

// syncMap writes the dirty pages of the mapping b of f to stable storage
// with msync(2) and MS_SYNC.
func syncMap(f *os.File, b []byte) error {
	_, _, errno := syscall.Syscall(syscall.SYS_MSYNC, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), syscall.MS_SYNC)
	if errno != 0 {
		return os.NewSyscallError("msync", errno)
	}
	return nil
}
