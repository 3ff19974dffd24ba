package fw

import "fmt"

// Tile writes P[r0:r1, c0:c1] into dst, row-major with stride c1-c0, so that
// a Dense is also a TileSource for MinimizeRowCD.
func (d *Dense) Tile(dst []float64, r0, r1, c0, c1 int) error {
	n := d.n
	if r0 < 0 || r0 > r1 || r1 > n || c0 < 0 || c0 > c1 || c1 > n {
		return fmt.Errorf("fw: dense tile rows %d:%d cols %d:%d out of range for n = %d", r0, r1, c0, c1, n)
	}
	w := c1 - c0
	if len(dst) < (r1-r0)*w {
		return fmt.Errorf("fw: dense tile rows %d:%d cols %d:%d: %d values of room, want %d", r0, r1, c0, c1, len(dst), (r1-r0)*w)
	}
	for i := r0; i < r1; i++ {
		copy(dst[(i-r0)*w:(i-r0+1)*w], d.p[i*n+c0:i*n+c1])
	}
	return nil
}
