//go:build !amd64 && !arm64

package graph

import "github.com/ssnmf/ssnmf/tile"

// rowKernels returns no kernels: CSR.Mul runs the portable loop here.
func rowKernels(tile.ISA) ([]rowKernel, int) { return nil, 0 }
