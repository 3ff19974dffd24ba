//go:build unix

package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// adviseSequential passes MADV_SEQUENTIAL on the page-aligned b to madvise.
func adviseSequential(b []byte) error {
	return os.NewSyscallError("madvise", unix.Madvise(b, unix.MADV_SEQUENTIAL))
}

// adviseRandom passes MADV_RANDOM on the page-aligned b to madvise.
func adviseRandom(b []byte) error {
	return os.NewSyscallError("madvise", unix.Madvise(b, unix.MADV_RANDOM))
}

// adviseNormal passes MADV_NORMAL on the page-aligned b to madvise.
func adviseNormal(b []byte) error {
	return os.NewSyscallError("madvise", unix.Madvise(b, unix.MADV_NORMAL))
}

// prefetch passes MADV_WILLNEED on the pages [addr, addr+n), page-aligned.
func prefetch(addr, n uintptr) error {
	_, _, e := unix.Syscall(unix.SYS_MADVISE, addr, n, unix.MADV_WILLNEED)
	if e != 0 {
		return os.NewSyscallError("madvise", e)
	}
	return nil
}
