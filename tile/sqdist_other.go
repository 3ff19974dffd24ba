//go:build !amd64 && !arm64

package tile

// sqDistsCol has no kernels here: SqDistsColumns runs the portable loop.
func sqDistsCol(ISA, []float64, []float64, []float64, int) int { return 0 }

// sqDistPairs has no kernels here: SqDistPairs runs the portable loop.
func sqDistPairs(ISA, []float64, []float64, int, []int32, []int32) int { return 0 }
