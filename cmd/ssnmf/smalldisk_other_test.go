//go:build !linux

package main

import (
	"runtime"
	"testing"
)

// smallDisk skips the test: it mounts a tmpfs, which only Linux has (see
// smalldisk_linux_test.go).
func smallDisk(t *testing.T, size string) (dir string, ok bool) {
	t.Helper()
	noDisk(t, "no tmpfs on %s", runtime.GOOS)
	return "", false
}
