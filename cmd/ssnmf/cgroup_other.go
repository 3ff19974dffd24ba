//go:build !linux

package main

// fitHeapToCgroup does nothing outside Linux, which has no cgroups.
func fitHeapToCgroup() int64 { return 0 }

// scratchMemory returns 0 outside Linux: a kNN search keeps its scratch
// in files.
func scratchMemory() int64 { return 0 }
