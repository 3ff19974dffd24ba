//go:build !amd64 && !arm64

package tile

// screenKernelOf returns family k's screen: none yet off amd64 and arm64.
func screenKernelOf(ISA) *screenKernel { return nil }
