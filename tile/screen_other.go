//go:build !amd64

package tile

// screenKernelOf returns family k's screen: none yet off amd64.
func screenKernelOf(ISA) *screenKernel { return nil }
