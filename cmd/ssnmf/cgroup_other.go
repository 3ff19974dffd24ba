//go:build !linux

package main

// fitHeapToCgroup does nothing outside Linux, which has no cgroups.
func fitHeapToCgroup() int64 { return 0 }
