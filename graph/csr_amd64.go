package graph

import "github.com/ssnmf/ssnmf/tile"

// The kernels of csr_amd64.s, written by asmgen/csr.py (see generate.go):
// csrRow{nv}{AVX512,AVX2} compute one row of P·W over at most 8·nv
// (AVX-512) or 4·nv (AVX2) columns, with the portable loop's arithmetic
// and bits. Each needs nnz >= 1, width from 1 to its most columns, and
// pointers that cover the row's entries, y's width columns and every row
// of w that the entries name (rowKernels' caller checks all three).

//go:noescape
func csrRow1AVX512(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow2AVX512(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow3AVX512(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow4AVX512(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow1AVX2(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow2AVX2(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow3AVX2(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow4AVX2(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

// rowKernels returns the row kernels of family isa, by vectors (index
// nv-1), and the columns of a vector; nil for a family without them.
func rowKernels(isa tile.ISA) ([]rowKernel, int) {
	switch isa {
	case tile.ISAAVX512:
		return []rowKernel{csrRow1AVX512, csrRow2AVX512, csrRow3AVX512, csrRow4AVX512}, 8
	case tile.ISAAVX2:
		return []rowKernel{csrRow1AVX2, csrRow2AVX2, csrRow3AVX2, csrRow4AVX2}, 4
	}
	return nil, 0
}
