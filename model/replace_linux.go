package model

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// replaceDir puts the directory tmp at dir: renamed if dir does not exist,
// else exchanged with it in one step (renameat2 RENAME_EXCHANGE) and the
// old one, now at tmp, removed. A file system without the exchange gets
// replaceAside.
func replaceDir(tmp, dir string) error {
	err := os.Rename(tmp, dir)
	if err == nil || !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
		return err
	}
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE); err != nil {
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
			return replaceAside(tmp, dir)
		}
		return err
	}
	return os.RemoveAll(tmp)
}
