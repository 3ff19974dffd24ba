//go:build !amd64

package fw

// vectorStrips reports whether the dense strip products run with vector
// instructions; without them the sparse updates are faster.
func vectorStrips() bool { return false }

func rowsMulAdd(acc, t []float64, h, wd int, d []float64, kp int) {
	rowsMulAddGo(acc, t, h, wd, d, kp)
}

func colsMulAdd(y, t []float64, h, wd int, d []float64, kp int) {
	colsMulAddGo(y, t, h, wd, d, kp)
}
