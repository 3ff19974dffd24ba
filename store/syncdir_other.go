//go:build !unix

package store

// syncDir does nothing on systems where directories cannot be synced
// through the os package.
func syncDir(dir string) error { return nil }
