//go:build unix && !linux

package store

import "os"

// syncMap writes the dirty pages of the mapping b of f to stable storage.
// The syscall package offers no portable msync(2) outside Linux, so syncMap
// relies on fsync(2), which on these systems' unified buffer caches also
// writes back pages dirtied through a shared mapping.
func syncMap(f *os.File, b []byte) error {
	return f.Sync()
}
