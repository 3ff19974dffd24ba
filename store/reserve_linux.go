package store

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// allocate allocates the bytes of f up to size with fallocate(2), which
// also extends the file; a file system without it is ErrUnsupported.
func allocate(f *os.File, size int64) error {
	if size == 0 {
		return nil
	}
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	for errors.Is(err, unix.EINTR) {
		err = unix.Fallocate(int(f.Fd()), 0, 0, size)
	}
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return errors.ErrUnsupported
	}
	if err != nil {
		return os.NewSyscallError("fallocate", err)
	}
	return nil
}
