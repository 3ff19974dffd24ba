//go:build !unix

package vfs

// canSyncDir reports whether syncDir syncs directories.
const canSyncDir = false

// syncDir does nothing on systems where directories cannot be synced
// through the os package.
func syncDir(dir string) error { return nil }
