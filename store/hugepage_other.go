//go:build !linux

package store

// adviseHuge does nothing off Linux, whose MADV_HUGEPAGE it stands for.
func adviseHuge([]byte) {}
