//go:build !linux

package solver

// cgroupMemoryLimit returns 0 outside Linux, which has no cgroups.
func cgroupMemoryLimit() int64 { return 0 }

// memAvailable returns 0 outside Linux: the memory available is not
// known, and a kNN search keeps its scratch in files.
func memAvailable() int64 { return 0 }
