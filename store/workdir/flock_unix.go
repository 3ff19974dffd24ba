//go:build unix && !aix && !solaris

package workdir

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// errLocked is the error of lock when another open file holds the lock.
var errLocked = errors.New("locked")

// lock takes an exclusive flock of f without waiting.
func lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		case errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EINVAL):
			return fmt.Errorf("%w: flock: %w", errors.ErrUnsupported, err)
		}
		return fmt.Errorf("flock: %w", err)
	}
}
