//go:build !amd64

package fw

// stripKernels is a family of vector strip kernels, which this
// architecture lacks.
type stripKernels struct{}

// stripKernelsOf returns nil: the strip products run the Go loops.
func stripKernelsOf(string) *stripKernels { return nil }

func rowsMulAdd(_ *stripKernels, acc, t []float64, h, wd int, d []float64, kp int) {
	rowsMulAddGo(acc, t, h, wd, d, kp)
}

func colsMulAdd(_ *stripKernels, y, t []float64, h, wd int, d []float64, kp int) {
	colsMulAddGo(y, t, h, wd, d, kp)
}
