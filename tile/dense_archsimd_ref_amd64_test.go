//go:build goexperiment.simd && amd64

package tile

import (
	"math"
	"math/rand/v2"
	"simd/archsimd"
	"slices"
	"testing"
)

// The archsimd code that the dense kernel ran before it moved to assembly
// (dense_amd64.s), kept as the reference the assembly is checked against
// bit for bit by TestDenseArchsimd: the reason this file needs
// GOEXPERIMENT=simd. The plain build checks the assembly against pure-Go
// references of the same arithmetic (dense_amd64_test.go).

// exp32Archsimd replaces every value v of t (len a multiple of 16) by
// exp(min(v, 0)); values below -150 give 0.
func exp32Archsimd(t []float32) {
	lo := archsimd.LoadFloat32x16(&expTab32[0])
	zero := archsimd.LoadFloat32x16(&expTab32[1])
	log2e := archsimd.LoadFloat32x16(&expTab32[2])
	ln2hi := archsimd.LoadFloat32x16(&expTab32[3])
	ln2lo := archsimd.LoadFloat32x16(&expTab32[4])
	p0 := archsimd.LoadFloat32x16(&expTab32[5])
	p1 := archsimd.LoadFloat32x16(&expTab32[6])
	p2 := archsimd.LoadFloat32x16(&expTab32[7])
	p3 := archsimd.LoadFloat32x16(&expTab32[8])
	p4 := archsimd.LoadFloat32x16(&expTab32[9])
	p5 := archsimd.LoadFloat32x16(&expTab32[10])
	one := archsimd.LoadFloat32x16(&expTab32[11])
	for i := 0; i+16 <= len(t); i += 16 {
		x := archsimd.LoadFloat32x16Slice(t[i:]).Max(lo).Min(zero)
		k := x.Mul(log2e).RoundToEvenScaled(0)
		r := k.MulAdd(ln2hi, x)
		r = k.MulAdd(ln2lo, r)
		y := p0.MulAdd(r, p1)
		y = y.MulAdd(r, p2)
		y = y.MulAdd(r, p3)
		y = y.MulAdd(r, p4)
		y = y.MulAdd(r, p5)
		y = y.MulAdd(r.Mul(r), r).Add(one)
		y.Scale(k).StoreSlice(t[i:])
	}
}

// exp64Archsimd replaces every value v of t (len a multiple of 8) by
// exp(min(v, 0)); values below -1100 give 0.
func exp64Archsimd(t []float64) {
	lo := archsimd.LoadFloat64x8(&expTab64[0])
	zero := archsimd.LoadFloat64x8(&expTab64[1])
	log2e := archsimd.LoadFloat64x8(&expTab64[2])
	ln2hi := archsimd.LoadFloat64x8(&expTab64[3])
	ln2lo := archsimd.LoadFloat64x8(&expTab64[4])
	c12 := archsimd.LoadFloat64x8(&expTab64[5])
	c11 := archsimd.LoadFloat64x8(&expTab64[6])
	c10 := archsimd.LoadFloat64x8(&expTab64[7])
	c9 := archsimd.LoadFloat64x8(&expTab64[8])
	c8 := archsimd.LoadFloat64x8(&expTab64[9])
	c7 := archsimd.LoadFloat64x8(&expTab64[10])
	c6 := archsimd.LoadFloat64x8(&expTab64[11])
	c5 := archsimd.LoadFloat64x8(&expTab64[12])
	c4 := archsimd.LoadFloat64x8(&expTab64[13])
	c3 := archsimd.LoadFloat64x8(&expTab64[14])
	c2 := archsimd.LoadFloat64x8(&expTab64[15])
	one := archsimd.LoadFloat64x8(&expTab64[16])
	for i := 0; i+8 <= len(t); i += 8 {
		x := archsimd.LoadFloat64x8Slice(t[i:]).Max(lo).Min(zero)
		k := x.Mul(log2e).RoundToEvenScaled(0)
		r := k.MulAdd(ln2hi, x)
		r = k.MulAdd(ln2lo, r)
		y := c12.MulAdd(r, c11)
		y = y.MulAdd(r, c10)
		y = y.MulAdd(r, c9)
		y = y.MulAdd(r, c8)
		y = y.MulAdd(r, c7)
		y = y.MulAdd(r, c6)
		y = y.MulAdd(r, c5)
		y = y.MulAdd(r, c4)
		y = y.MulAdd(r, c3)
		y = y.MulAdd(r, c2)
		// 1 + r + r²·y, adding the small terms first.
		y = y.MulAdd(r.Mul(r), r).Add(one)
		y.Scale(k).StoreSlice(t[i:])
	}
}

// addClassArchsimd adds the 16 float32 values of v, widened, to acc[0:16].
func addClassArchsimd(acc []float64, v archsimd.Float32x16) {
	lo := v.GetLo().ConvertToFloat64()
	hi := v.GetHi().ConvertToFloat64()
	archsimd.LoadFloat64x8Slice(acc).Add(lo).StoreSlice(acc)
	archsimd.LoadFloat64x8Slice(acc[8:]).Add(hi).StoreSlice(acc[8:])
}

// squaresArchsimd adds the squaresArchsimd of v's values, widened, to sq0 and sq1.
func squaresArchsimd(sq0, sq1 archsimd.Float64x8, v archsimd.Float32x16) (archsimd.Float64x8, archsimd.Float64x8) {
	lo := v.GetLo().ConvertToFloat64()
	hi := v.GetHi().ConvertToFloat64()
	return lo.MulAdd(lo, sq0), hi.MulAdd(hi, sq1)
}

// consumeArchsimd adds an hp×wp float32 tile t (row-major, stride wp) to
// the class-major float64 accumulators: accR[sr... ] gets the row direction,
// accR[c*hp+i] += sum of t[i][j] over the j with sc[j] = c, and, off the
// diagonal, accC[c*wp+j] += sum of t[i][j] over the i with sr[i] = c. With
// frob it returns the sum of squaresArchsimd of the tile's entries.
func consumeArchsimd(t []float32, hp, wp int, sr, sc []int32, accR, accC []float64, diag, frob bool) float64 {
	i0v := archsimd.LoadUint32x16(&transposeIdx[0])
	i1v := archsimd.LoadUint32x16(&transposeIdx[1])
	i2v := archsimd.LoadUint32x16(&transposeIdx[2])
	i3v := archsimd.LoadUint32x16(&transposeIdx[3])
	i4v := archsimd.LoadUint32x16(&transposeIdx[4])
	i5v := archsimd.LoadUint32x16(&transposeIdx[5])
	i6v := archsimd.LoadUint32x16(&transposeIdx[6])
	i7v := archsimd.LoadUint32x16(&transposeIdx[7])
	var sq0, sq1 archsimd.Float64x8
	for i0 := 0; i0 < hp; i0 += 16 {
		for j0 := 0; j0 < wp; j0 += 16 {
			v0 := archsimd.LoadFloat32x16Slice(t[(i0+0)*wp+j0:])
			v1 := archsimd.LoadFloat32x16Slice(t[(i0+1)*wp+j0:])
			v2 := archsimd.LoadFloat32x16Slice(t[(i0+2)*wp+j0:])
			v3 := archsimd.LoadFloat32x16Slice(t[(i0+3)*wp+j0:])
			v4 := archsimd.LoadFloat32x16Slice(t[(i0+4)*wp+j0:])
			v5 := archsimd.LoadFloat32x16Slice(t[(i0+5)*wp+j0:])
			v6 := archsimd.LoadFloat32x16Slice(t[(i0+6)*wp+j0:])
			v7 := archsimd.LoadFloat32x16Slice(t[(i0+7)*wp+j0:])
			v8 := archsimd.LoadFloat32x16Slice(t[(i0+8)*wp+j0:])
			v9 := archsimd.LoadFloat32x16Slice(t[(i0+9)*wp+j0:])
			v10 := archsimd.LoadFloat32x16Slice(t[(i0+10)*wp+j0:])
			v11 := archsimd.LoadFloat32x16Slice(t[(i0+11)*wp+j0:])
			v12 := archsimd.LoadFloat32x16Slice(t[(i0+12)*wp+j0:])
			v13 := archsimd.LoadFloat32x16Slice(t[(i0+13)*wp+j0:])
			v14 := archsimd.LoadFloat32x16Slice(t[(i0+14)*wp+j0:])
			v15 := archsimd.LoadFloat32x16Slice(t[(i0+15)*wp+j0:])
			if !diag {
				addClassArchsimd(accC[int(sr[i0+0])*wp+j0:], v0)
				addClassArchsimd(accC[int(sr[i0+1])*wp+j0:], v1)
				addClassArchsimd(accC[int(sr[i0+2])*wp+j0:], v2)
				addClassArchsimd(accC[int(sr[i0+3])*wp+j0:], v3)
				addClassArchsimd(accC[int(sr[i0+4])*wp+j0:], v4)
				addClassArchsimd(accC[int(sr[i0+5])*wp+j0:], v5)
				addClassArchsimd(accC[int(sr[i0+6])*wp+j0:], v6)
				addClassArchsimd(accC[int(sr[i0+7])*wp+j0:], v7)
				addClassArchsimd(accC[int(sr[i0+8])*wp+j0:], v8)
				addClassArchsimd(accC[int(sr[i0+9])*wp+j0:], v9)
				addClassArchsimd(accC[int(sr[i0+10])*wp+j0:], v10)
				addClassArchsimd(accC[int(sr[i0+11])*wp+j0:], v11)
				addClassArchsimd(accC[int(sr[i0+12])*wp+j0:], v12)
				addClassArchsimd(accC[int(sr[i0+13])*wp+j0:], v13)
				addClassArchsimd(accC[int(sr[i0+14])*wp+j0:], v14)
				addClassArchsimd(accC[int(sr[i0+15])*wp+j0:], v15)
			}
			if frob {
				sq0, sq1 = squaresArchsimd(sq0, sq1, v0)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v1)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v2)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v3)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v4)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v5)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v6)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v7)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v8)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v9)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v10)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v11)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v12)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v13)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v14)
				sq0, sq1 = squaresArchsimd(sq0, sq1, v15)
			}
			var u0, u1, u2, u3, u4, u5, u6, u7, u8, u9, u10, u11, u12, u13, u14, u15 archsimd.Float32x16
			u0, u8 = v0.ConcatPermute(v8, i0v), v0.ConcatPermute(v8, i1v)
			u1, u9 = v1.ConcatPermute(v9, i0v), v1.ConcatPermute(v9, i1v)
			u2, u10 = v2.ConcatPermute(v10, i0v), v2.ConcatPermute(v10, i1v)
			u3, u11 = v3.ConcatPermute(v11, i0v), v3.ConcatPermute(v11, i1v)
			u4, u12 = v4.ConcatPermute(v12, i0v), v4.ConcatPermute(v12, i1v)
			u5, u13 = v5.ConcatPermute(v13, i0v), v5.ConcatPermute(v13, i1v)
			u6, u14 = v6.ConcatPermute(v14, i0v), v6.ConcatPermute(v14, i1v)
			u7, u15 = v7.ConcatPermute(v15, i0v), v7.ConcatPermute(v15, i1v)
			v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15 = u0, u1, u2, u3, u4, u5, u6, u7, u8, u9, u10, u11, u12, u13, u14, u15
			u0, u4 = v0.ConcatPermute(v4, i2v), v0.ConcatPermute(v4, i3v)
			u1, u5 = v1.ConcatPermute(v5, i2v), v1.ConcatPermute(v5, i3v)
			u2, u6 = v2.ConcatPermute(v6, i2v), v2.ConcatPermute(v6, i3v)
			u3, u7 = v3.ConcatPermute(v7, i2v), v3.ConcatPermute(v7, i3v)
			u8, u12 = v8.ConcatPermute(v12, i2v), v8.ConcatPermute(v12, i3v)
			u9, u13 = v9.ConcatPermute(v13, i2v), v9.ConcatPermute(v13, i3v)
			u10, u14 = v10.ConcatPermute(v14, i2v), v10.ConcatPermute(v14, i3v)
			u11, u15 = v11.ConcatPermute(v15, i2v), v11.ConcatPermute(v15, i3v)
			v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15 = u0, u1, u2, u3, u4, u5, u6, u7, u8, u9, u10, u11, u12, u13, u14, u15
			u0, u2 = v0.ConcatPermute(v2, i4v), v0.ConcatPermute(v2, i5v)
			u1, u3 = v1.ConcatPermute(v3, i4v), v1.ConcatPermute(v3, i5v)
			u4, u6 = v4.ConcatPermute(v6, i4v), v4.ConcatPermute(v6, i5v)
			u5, u7 = v5.ConcatPermute(v7, i4v), v5.ConcatPermute(v7, i5v)
			u8, u10 = v8.ConcatPermute(v10, i4v), v8.ConcatPermute(v10, i5v)
			u9, u11 = v9.ConcatPermute(v11, i4v), v9.ConcatPermute(v11, i5v)
			u12, u14 = v12.ConcatPermute(v14, i4v), v12.ConcatPermute(v14, i5v)
			u13, u15 = v13.ConcatPermute(v15, i4v), v13.ConcatPermute(v15, i5v)
			v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15 = u0, u1, u2, u3, u4, u5, u6, u7, u8, u9, u10, u11, u12, u13, u14, u15
			u0, u1 = v0.ConcatPermute(v1, i6v), v0.ConcatPermute(v1, i7v)
			u2, u3 = v2.ConcatPermute(v3, i6v), v2.ConcatPermute(v3, i7v)
			u4, u5 = v4.ConcatPermute(v5, i6v), v4.ConcatPermute(v5, i7v)
			u6, u7 = v6.ConcatPermute(v7, i6v), v6.ConcatPermute(v7, i7v)
			u8, u9 = v8.ConcatPermute(v9, i6v), v8.ConcatPermute(v9, i7v)
			u10, u11 = v10.ConcatPermute(v11, i6v), v10.ConcatPermute(v11, i7v)
			u12, u13 = v12.ConcatPermute(v13, i6v), v12.ConcatPermute(v13, i7v)
			u14, u15 = v14.ConcatPermute(v15, i6v), v14.ConcatPermute(v15, i7v)
			v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15 = u0, u1, u2, u3, u4, u5, u6, u7, u8, u9, u10, u11, u12, u13, u14, u15
			addClassArchsimd(accR[int(sc[j0+0])*hp+i0:], v0)
			addClassArchsimd(accR[int(sc[j0+1])*hp+i0:], v1)
			addClassArchsimd(accR[int(sc[j0+2])*hp+i0:], v2)
			addClassArchsimd(accR[int(sc[j0+3])*hp+i0:], v3)
			addClassArchsimd(accR[int(sc[j0+4])*hp+i0:], v4)
			addClassArchsimd(accR[int(sc[j0+5])*hp+i0:], v5)
			addClassArchsimd(accR[int(sc[j0+6])*hp+i0:], v6)
			addClassArchsimd(accR[int(sc[j0+7])*hp+i0:], v7)
			addClassArchsimd(accR[int(sc[j0+8])*hp+i0:], v8)
			addClassArchsimd(accR[int(sc[j0+9])*hp+i0:], v9)
			addClassArchsimd(accR[int(sc[j0+10])*hp+i0:], v10)
			addClassArchsimd(accR[int(sc[j0+11])*hp+i0:], v11)
			addClassArchsimd(accR[int(sc[j0+12])*hp+i0:], v12)
			addClassArchsimd(accR[int(sc[j0+13])*hp+i0:], v13)
			addClassArchsimd(accR[int(sc[j0+14])*hp+i0:], v14)
			addClassArchsimd(accR[int(sc[j0+15])*hp+i0:], v15)
		}
	}
	if !frob {
		return 0
	}
	var buf [8]float64
	sq0.Add(sq1).Store(&buf)
	return ((buf[0] + buf[1]) + (buf[2] + buf[3])) + ((buf[4] + buf[5]) + (buf[6] + buf[7]))
}

// gen64x2Archsimd writes the exponent -gamma·d² of the 4×16 block of a tile
// at t (stride wp): xr holds the 4 rows' features interleaved (4 values
// per feature), xt the columns' features transposed (p×wp, from the
// block's first column), gr and gc the terms -gamma·|x|² of rows and
// columns.
func gen64x2Archsimd(t []float64, wp int, xr, xt []float64, p int, gr, gc []float64, tg archsimd.Float64x8) {
	_ = t[3*wp+15]
	var c00, c01 archsimd.Float64x8
	var c10, c11 archsimd.Float64x8
	var c20, c21 archsimd.Float64x8
	var c30, c31 archsimd.Float64x8
	for q := range p {
		bq := (*[16]float64)(xt[q*wp : q*wp+16])
		b0 := archsimd.LoadFloat64x8((*[8]float64)(bq[0:8]))
		b1 := archsimd.LoadFloat64x8((*[8]float64)(bq[8:16]))
		aq := (*[4]float64)(xr[4*q : 4*q+4])
		x0 := archsimd.BroadcastFloat64x8(aq[0])
		c00 = x0.MulAdd(b0, c00)
		c01 = x0.MulAdd(b1, c01)
		x1 := archsimd.BroadcastFloat64x8(aq[1])
		c10 = x1.MulAdd(b0, c10)
		c11 = x1.MulAdd(b1, c11)
		x2 := archsimd.BroadcastFloat64x8(aq[2])
		c20 = x2.MulAdd(b0, c20)
		c21 = x2.MulAdd(b1, c21)
		x3 := archsimd.BroadcastFloat64x8(aq[3])
		c30 = x3.MulAdd(b0, c30)
		c31 = x3.MulAdd(b1, c31)
	}
	g0 := archsimd.LoadFloat64x8Slice(gc[0:])
	g1 := archsimd.LoadFloat64x8Slice(gc[8:])
	gr0 := archsimd.BroadcastFloat64x8(gr[0])
	c00.MulAdd(tg, g0.Add(gr0)).StoreSlice(t[0*wp+0:])
	c01.MulAdd(tg, g1.Add(gr0)).StoreSlice(t[0*wp+8:])
	gr1 := archsimd.BroadcastFloat64x8(gr[1])
	c10.MulAdd(tg, g0.Add(gr1)).StoreSlice(t[1*wp+0:])
	c11.MulAdd(tg, g1.Add(gr1)).StoreSlice(t[1*wp+8:])
	gr2 := archsimd.BroadcastFloat64x8(gr[2])
	c20.MulAdd(tg, g0.Add(gr2)).StoreSlice(t[2*wp+0:])
	c21.MulAdd(tg, g1.Add(gr2)).StoreSlice(t[2*wp+8:])
	gr3 := archsimd.BroadcastFloat64x8(gr[3])
	c30.MulAdd(tg, g0.Add(gr3)).StoreSlice(t[3*wp+0:])
	c31.MulAdd(tg, g1.Add(gr3)).StoreSlice(t[3*wp+8:])
}

// gen64x1Archsimd writes the exponent -gamma·d² of the 4×8 block of a tile
// at t (stride wp): xr holds the 4 rows' features interleaved (4 values
// per feature), xt the columns' features transposed (p×wp, from the
// block's first column), gr and gc the terms -gamma·|x|² of rows and
// columns.
func gen64x1Archsimd(t []float64, wp int, xr, xt []float64, p int, gr, gc []float64, tg archsimd.Float64x8) {
	_ = t[3*wp+7]
	var c00 archsimd.Float64x8
	var c10 archsimd.Float64x8
	var c20 archsimd.Float64x8
	var c30 archsimd.Float64x8
	for q := range p {
		bq := (*[8]float64)(xt[q*wp : q*wp+8])
		b0 := archsimd.LoadFloat64x8((*[8]float64)(bq[0:8]))
		aq := (*[4]float64)(xr[4*q : 4*q+4])
		x0 := archsimd.BroadcastFloat64x8(aq[0])
		c00 = x0.MulAdd(b0, c00)
		x1 := archsimd.BroadcastFloat64x8(aq[1])
		c10 = x1.MulAdd(b0, c10)
		x2 := archsimd.BroadcastFloat64x8(aq[2])
		c20 = x2.MulAdd(b0, c20)
		x3 := archsimd.BroadcastFloat64x8(aq[3])
		c30 = x3.MulAdd(b0, c30)
	}
	g0 := archsimd.LoadFloat64x8Slice(gc[0:])
	gr0 := archsimd.BroadcastFloat64x8(gr[0])
	c00.MulAdd(tg, g0.Add(gr0)).StoreSlice(t[0*wp+0:])
	gr1 := archsimd.BroadcastFloat64x8(gr[1])
	c10.MulAdd(tg, g0.Add(gr1)).StoreSlice(t[1*wp+0:])
	gr2 := archsimd.BroadcastFloat64x8(gr[2])
	c20.MulAdd(tg, g0.Add(gr2)).StoreSlice(t[2*wp+0:])
	gr3 := archsimd.BroadcastFloat64x8(gr[3])
	c30.MulAdd(tg, g0.Add(gr3)).StoreSlice(t[3*wp+0:])
}

// gemmArchsimd is gemmRef32 in archsimd: one row and 16 columns at a time,
// the float32 fused multiply-adds widened and added every flushEvery steps.
func gemmArchsimd(y []float64, ldy int, a []float32, rs, is int, b []float32, ldb, m, cols, inner int) {
	for r := range m {
		for c0 := 0; c0 < cols; c0 += 16 {
			for s0 := 0; s0 < inner; s0 += flushEvery {
				var acc archsimd.Float32x16
				for s := s0; s < min(inner, s0+flushEvery); s++ {
					x := archsimd.BroadcastFloat32x16(a[r*rs+s*is])
					acc = x.MulAdd(archsimd.LoadFloat32x16Slice(b[s*ldb+c0:]), acc)
				}
				addClassArchsimd(y[r*ldy+c0:], acc)
			}
		}
	}
	archsimd.ClearAVXUpperBits()
}

// genTile64Archsimd is genTile64 as the archsimd kernel ran it: 4-row
// blocks (xr packed by 4), then exp64Archsimd.
func genTile64Archsimd(t []float64, hp, wp int, xr, xt []float64, p int, gr, gc []float64, tg float64) {
	tgv := archsimd.BroadcastFloat64x8(tg)
	for i0 := 0; i0 < hp; i0 += 4 {
		ti := t[i0*wp : (i0+4)*wp]
		j0 := 0
		for ; j0+16 <= wp; j0 += 16 {
			gen64x2Archsimd(ti[j0:], wp, xr[i0*p:(i0+4)*p], xt[j0:], p, gr[i0:], gc[j0:], tgv)
		}
		for ; j0 < wp; j0 += 8 {
			gen64x1Archsimd(ti[j0:], wp, xr[i0*p:(i0+4)*p], xt[j0:], p, gr[i0:], gc[j0:], tgv)
		}
		exp64Archsimd(ti)
	}
	archsimd.ClearAVXUpperBits()
}

// TestDenseArchsimd checks the assembly of the dense kernel bit for bit
// against the archsimd code it replaced: exp in both precisions (edges,
// NaN and infinities included), the one-hot consumer, the float64
// exponent kernels and the float32 P·W kernels.
func TestDenseArchsimd(t *testing.T) {
	skipWithoutAVX512(t)
	rng := rand.New(rand.NewPCG(21, 22))
	t.Run("exp", func(t *testing.T) {
		x32 := expInputs[float32](1<<16, -160, rng)
		a, b := slices.Clone(x32), slices.Clone(x32)
		avx512Dense.exp32(a)
		exp32Archsimd(b)
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("exp32(%v): %v, archsimd %v", x32[i], a[i], b[i])
			}
		}
		x64 := expInputs[float64](1<<15, -1200, rng)
		c, d := slices.Clone(x64), slices.Clone(x64)
		avx512Dense.exp64(c)
		exp64Archsimd(d)
		for i := range c {
			if math.Float64bits(c[i]) != math.Float64bits(d[i]) {
				t.Fatalf("exp64(%v): %v, archsimd %v", x64[i], c[i], d[i])
			}
		}
	})
	t.Run("consume", func(t *testing.T) {
		for _, tc := range []struct {
			hp, wp, k  int
			diag, frob bool
		}{{16, 16, 1, false, true}, {32, 48, 5, false, false}, {48, 32, 5, true, true}, {64, 80, 3, false, true}} {
			tl := randomSlice(tc.hp*tc.wp, rng.Float32)
			cls := func() int32 { return int32(rng.IntN(tc.k)) }
			sr, sc := randomSlice(tc.hp, cls), randomSlice(tc.wp, cls)
			accR, accC := randomSlice(tc.k*tc.hp, rng.Float64), randomSlice(tc.k*tc.wp, rng.Float64)
			refR, refC := slices.Clone(accR), slices.Clone(accC)
			got := avx512Dense.consumeOneHot32(tl, tc.hp, tc.wp, sr, sc, accR, accC, tc.diag, tc.frob)
			want := consumeArchsimd(tl, tc.hp, tc.wp, sr, sc, refR, refC, tc.diag, tc.frob)
			archsimd.ClearAVXUpperBits()
			if math.Float64bits(got) != math.Float64bits(want) || !bitsEqual(accR, refR) || !bitsEqual(accC, refC) {
				t.Fatalf("%+v: differs from archsimd (squares %v, %v)", tc, got, want)
			}
		}
	})
	t.Run("gen64", func(t *testing.T) {
		for _, tc := range []struct{ hp, wp, p int }{{8, 8, 1}, {16, 24, 3}, {24, 40, 16}, {32, 56, 37}} {
			x, xt := randomSlice(tc.hp*tc.p, rng.NormFloat64), randomSlice(tc.p*tc.wp, rng.NormFloat64)
			g := func() float64 { return -0.3 * rng.Float64() }
			gr, gc := randomSlice(tc.hp, g), randomSlice(tc.wp, g)
			xr8, xr4 := make([]float64, tc.hp*tc.p), make([]float64, tc.hp*tc.p)
			packRows(xr8, x, tc.p, 8)
			packRows(xr4, x, tc.p, 4)
			got, want := make([]float64, tc.hp*tc.wp), make([]float64, tc.hp*tc.wp)
			avx512Dense.genTile64(got, tc.hp, tc.wp, xr8, xt, tc.p, gr, gc, 0.2)
			genTile64Archsimd(want, tc.hp, tc.wp, xr4, xt, tc.p, gr, gc, 0.2)
			if !bitsEqual(got, want) {
				t.Fatalf("%+v: differs from archsimd", tc)
			}
		}
	})
	t.Run("gemm32", func(t *testing.T) {
		for _, tc := range []gemmCase{{m: 16, kp: 48, inner: 130}, {m: 24, kp: 112, inner: 64, transposed: true}} {
			a, b, rs, is := operands(tc, rng.Float32)
			got := randomSlice(tc.m*tc.kp, rng.Float64)
			want := slices.Clone(got)
			avx512Dense.gemmTile32(got, tc.kp, a, rs, is, b, tc.m, tc.inner, true)
			gemmArchsimd(want, tc.kp, a, rs, is, b, tc.kp, tc.m, tc.kp, tc.inner)
			if !bitsEqual(got, want) {
				t.Fatalf("%+v: differs from archsimd", tc)
			}
		}
	})
}

// bitsEqual reports whether a and b hold the same float64 bits.
func bitsEqual(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}
