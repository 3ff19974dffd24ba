package graph

import "github.com/ssnmf/ssnmf/tile"

// The kernels of csr_arm64.s, written by asmgen/csr_arm64.py (see
// generate.go): csrRow{width}NEON computes one row of P·W over width
// columns, 1 to 16, with the portable loop's arithmetic and bits. Each
// needs nnz >= 1 and pointers that cover the row's entries, y's width
// columns and every row of w that the entries name (rowKernels' caller
// checks all three).

//go:noescape
func csrRow1NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow2NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow3NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow4NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow5NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow6NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow7NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow8NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow9NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow10NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow11NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow12NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow13NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow14NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow15NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

//go:noescape
func csrRow16NEON(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

// rowKernels returns the row kernels of family isa, by width (index
// width-1: one column a "vector"); nil for a family without them.
func rowKernels(isa tile.ISA) ([]rowKernel, int) {
	if isa != tile.ISANEON {
		return nil, 0
	}
	return []rowKernel{csrRow1NEON, csrRow2NEON, csrRow3NEON, csrRow4NEON, csrRow5NEON, csrRow6NEON, csrRow7NEON, csrRow8NEON, csrRow9NEON, csrRow10NEON, csrRow11NEON, csrRow12NEON, csrRow13NEON, csrRow14NEON, csrRow15NEON, csrRow16NEON}, 1
}
