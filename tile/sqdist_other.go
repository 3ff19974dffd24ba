//go:build !amd64 && !arm64

package tile

// sqDistsCol has no kernels here: SqDistsColumns runs the portable loop.
func sqDistsCol(ISA, []float64, []float64, []float64, int) int { return 0 }

// sqDistsRows has no kernels here: SqDists runs the portable loop.
func sqDistsRows(ISA, []float64, []float64, []float64, int, []int32) int { return 0 }
