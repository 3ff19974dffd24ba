package fw

// This file holds the dense products of the row-CD strip sweep (see
// rowcd.pull and rowcd.push): with the changes of W packed as dense rows of
// kp >= k values (kp a multiple of 8), the pull and the push are small
// matrix products with a tile, which amd64 runs with the assembly kernels
// of strip_amd64.s where the CPU has AVX-512F or AVX2 and FMA (chosen at run
// time, see strip_amd64.go; fused multiply-adds) and every build can run
// with the portable loops below (products rounded before they are added).

// denseStripMaxK is the largest k for which the sweep multiplies the
// changes as dense rows; above it the changes (at most 2·Moves nonzeros a
// row) are applied entry by entry.
const denseStripMaxK = 16

// packedWidth returns k rounded up to a multiple of 8.
func packedWidth(k int) int { return (k + 7) / 8 * 8 }

// rowsMulAddGo sets acc[i*kp+c] += Σ_l t[i*wd+l] d[l*kp+c] for the h×wd
// tile t: the pull of a tile's pending changes d (wd×kp) into its rows.
func rowsMulAddGo(acc, t []float64, h, wd int, d []float64, kp int) {
	for i := range h {
		ai := acc[i*kp : (i+1)*kp]
		for l, tv := range t[i*wd : (i+1)*wd] {
			if tv == 0 {
				continue
			}
			for c, dv := range d[l*kp : (l+1)*kp] {
				ai[c] += float64(tv * dv)
			}
		}
	}
}

// colsMulAddGo sets y[j*kp+c] += Σ_i t[i*wd+j] d[i*kp+c] for the h×wd tile
// t: the push of the changes d (h×kp) of the tile's rows to its columns.
func colsMulAddGo(y, t []float64, h, wd int, d []float64, kp int) {
	for i := range h {
		di := d[i*kp : (i+1)*kp]
		for j, tv := range t[i*wd : (i+1)*wd] {
			if tv == 0 {
				continue
			}
			yj := y[j*kp : (j+1)*kp]
			for c, dv := range di {
				yj[c] += float64(tv * dv)
			}
		}
	}
}
