package model

import "os"

// replaceAside replaces the directory dir by tmp in two renames: dir to a
// name beside it, tmp to dir; then removes the old one. Between the two
// renames dir is missing, and a crash there leaves the old model at
// dir + ".old".
func replaceAside(tmp, dir string) error {
	old := dir + ".old"
	if err := os.RemoveAll(old); err != nil {
		return err
	}
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.Rename(old, dir)
		return err
	}
	return os.RemoveAll(old)
}
