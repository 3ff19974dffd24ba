//go:build !linux

package store

import (
	"errors"
	"os"
)

// allocate reports that this system has no fallocate: Reserve writes the
// zeros out.
func allocate(*os.File, int64) error { return errors.ErrUnsupported }
