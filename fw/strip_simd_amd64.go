//go:build goexperiment.simd && amd64

package fw

import "simd/archsimd"

// vectorStrips reports whether the dense strip products run with vector
// instructions: with AVX-512.
func vectorStrips() bool { return archsimd.X86.AVX512() }

// rowsMulAdd is rowsMulAddGo with vector instructions for kp = 8 or 16, four
// rows at a time (the portable loops otherwise, or without AVX-512).
func rowsMulAdd(acc, t []float64, h, wd int, d []float64, kp int) {
	if (kp != 8 && kp != 16) || !vectorStrips() {
		rowsMulAddGo(acc, t, h, wd, d, kp)
		return
	}
	if h == 0 || wd == 0 {
		return
	}
	_ = acc[h*kp-1]
	_ = t[h*wd-1]
	_ = d[wd*kp-1]
	nv := kp / 8
	i := 0
	for ; i+4 <= h; i += 4 {
		for v := range nv {
			o := 8 * v
			a0 := archsimd.LoadFloat64x8Slice(acc[(i+0)*kp+o:])
			a1 := archsimd.LoadFloat64x8Slice(acc[(i+1)*kp+o:])
			a2 := archsimd.LoadFloat64x8Slice(acc[(i+2)*kp+o:])
			a3 := archsimd.LoadFloat64x8Slice(acc[(i+3)*kp+o:])
			t0, t1, t2, t3 := t[(i+0)*wd:(i+1)*wd], t[(i+1)*wd:(i+2)*wd], t[(i+2)*wd:(i+3)*wd], t[(i+3)*wd:(i+4)*wd]
			for l := range wd {
				dv := archsimd.LoadFloat64x8Slice(d[l*kp+o:])
				a0 = archsimd.BroadcastFloat64x8(t0[l]).MulAdd(dv, a0)
				a1 = archsimd.BroadcastFloat64x8(t1[l]).MulAdd(dv, a1)
				a2 = archsimd.BroadcastFloat64x8(t2[l]).MulAdd(dv, a2)
				a3 = archsimd.BroadcastFloat64x8(t3[l]).MulAdd(dv, a3)
			}
			a0.StoreSlice(acc[(i+0)*kp+o:])
			a1.StoreSlice(acc[(i+1)*kp+o:])
			a2.StoreSlice(acc[(i+2)*kp+o:])
			a3.StoreSlice(acc[(i+3)*kp+o:])
		}
	}
	for ; i < h; i++ {
		ti := t[i*wd : (i+1)*wd]
		for v := range nv {
			o := 8 * v
			a := archsimd.LoadFloat64x8Slice(acc[i*kp+o:])
			for l, tv := range ti {
				a = archsimd.BroadcastFloat64x8(tv).MulAdd(archsimd.LoadFloat64x8Slice(d[l*kp+o:]), a)
			}
			a.StoreSlice(acc[i*kp+o:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

// colsMulAdd is colsMulAddGo with vector instructions for kp = 8 or 16,
// four columns at a time (the portable loops otherwise, or without
// AVX-512).
func colsMulAdd(y, t []float64, h, wd int, d []float64, kp int) {
	if (kp != 8 && kp != 16) || !vectorStrips() {
		colsMulAddGo(y, t, h, wd, d, kp)
		return
	}
	if h == 0 || wd == 0 {
		return
	}
	_ = y[wd*kp-1]
	_ = t[h*wd-1]
	_ = d[h*kp-1]
	nv := kp / 8
	j := 0
	for ; j+4 <= wd; j += 4 {
		for v := range nv {
			o := 8 * v
			y0 := archsimd.LoadFloat64x8Slice(y[(j+0)*kp+o:])
			y1 := archsimd.LoadFloat64x8Slice(y[(j+1)*kp+o:])
			y2 := archsimd.LoadFloat64x8Slice(y[(j+2)*kp+o:])
			y3 := archsimd.LoadFloat64x8Slice(y[(j+3)*kp+o:])
			for i := range h {
				dv := archsimd.LoadFloat64x8Slice(d[i*kp+o:])
				tr := t[i*wd+j : i*wd+j+4]
				y0 = archsimd.BroadcastFloat64x8(tr[0]).MulAdd(dv, y0)
				y1 = archsimd.BroadcastFloat64x8(tr[1]).MulAdd(dv, y1)
				y2 = archsimd.BroadcastFloat64x8(tr[2]).MulAdd(dv, y2)
				y3 = archsimd.BroadcastFloat64x8(tr[3]).MulAdd(dv, y3)
			}
			y0.StoreSlice(y[(j+0)*kp+o:])
			y1.StoreSlice(y[(j+1)*kp+o:])
			y2.StoreSlice(y[(j+2)*kp+o:])
			y3.StoreSlice(y[(j+3)*kp+o:])
		}
	}
	for ; j < wd; j++ {
		for v := range nv {
			o := 8 * v
			a := archsimd.LoadFloat64x8Slice(y[j*kp+o:])
			for i := range h {
				a = archsimd.BroadcastFloat64x8(t[i*wd+j]).MulAdd(archsimd.LoadFloat64x8Slice(d[i*kp+o:]), a)
			}
			a.StoreSlice(y[j*kp+o:])
		}
	}
	archsimd.ClearAVXUpperBits()
}
