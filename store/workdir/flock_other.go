//go:build !unix || aix || solaris

package workdir

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// errLocked is the error of lock when another open file holds the lock.
var errLocked = errors.New("locked")

// lock cannot lock here: there is no flock.
func lock(*os.File) error {
	return fmt.Errorf("%w: no flock on %s", errors.ErrUnsupported, runtime.GOOS)
}
