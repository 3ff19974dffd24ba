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
