//go:build !linux

package store

// AdviseHuge does nothing off Linux, whose MADV_HUGEPAGE it stands for.
func AdviseHuge([]byte) {}
