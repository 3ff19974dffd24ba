//go:build unix

package vfs

import (
	"errors"
	"os"
	"syscall"
)

// canSyncDir reports whether syncDir syncs directories.
const canSyncDir = true

// syncDir flushes the directory dir to stable storage, making a rename
// within it durable. A file system that cannot sync a directory (EINVAL or
// ENOTSUP from fsync, as some network and FUSE file systems answer) makes
// its renames durable by itself or not at all, and is not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		err = nil
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
