//go:build !linux

package model

import "os"

// replaceDir puts the directory tmp at dir: renamed if dir does not exist,
// else by replaceAside.
func replaceDir(tmp, dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return os.Rename(tmp, dir)
	}
	return replaceAside(tmp, dir)
}
