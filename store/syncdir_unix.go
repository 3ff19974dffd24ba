//go:build unix

package store

import "os"

// syncDir flushes the directory dir to stable storage, making a rename
// within it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
