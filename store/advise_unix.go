//go:build unix

package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// adviseSequential tells the kernel that b, a mapping, is read in order.
func adviseSequential(b []byte) error {
	return os.NewSyscallError("madvise", unix.Madvise(b, unix.MADV_SEQUENTIAL))
}
