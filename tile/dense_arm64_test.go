//go:build arm64

package tile

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The tests of the NEON dense kernels. The micro-kernels are checked bit
// for bit against their arithmetic in pure Go (each operation rounded as
// the instruction rounds it; conversions keep the compiler from fusing a
// multiply and an add), the Engine's passes against the portable kernel's
// within a stated rounding bound (TestNEONMatchesPortable). Under qemu-user
// they check the instructions' encodings, which the generator computes.

// skipWithoutNEON skips tb where the CPU lacks Advanced SIMD (never on a
// real arm64 CPU that Go runs on).
func skipWithoutNEON(tb testing.TB) {
	tb.Helper()
	if !cpuHas(ISANEON) {
		tb.Skip("this CPU has no Advanced SIMD")
	}
}

// exp32NEONRef is exp32Slice's arithmetic on one value, in pure Go.
func exp32NEONRef(v float32) float32 {
	c := func(i int) float32 { return expNEON32[i] }
	if !(v >= c(0)) {
		return 0 // below the low bound, or NaN: the mask clears it
	}
	x := min(v, 0) // FMIN: -0 stays -0, +Inf gives 0
	k := float32(math.RoundToEven(float64(float32(x * c(1)))))
	r := fma32(k, c(2), x)
	r = fma32(k, c(3), r)
	y := fma32(c(4), r, c(5))
	for i := 6; i <= 9; i++ {
		y = fma32(y, r, c(i))
	}
	y = fma32(y, float32(r*r), r)
	y = float32(y + c(10))
	return float32(y * math.Float32frombits(uint32(int32(k)+127)<<23))
}

// exp64NEONRef is exp64Slice's arithmetic on one value, in pure Go.
func exp64NEONRef(v float64) float64 {
	c := func(i int) float64 { return expNEON64[i] }
	if !(v >= c(0)) {
		return 0
	}
	x := min(v, 0)
	k := math.RoundToEven(float64(x * c(1)))
	r := math.FMA(k, c(2), x)
	r = math.FMA(k, c(3), r)
	y := math.FMA(c(4), r, c(5))
	for i := 6; i <= 14; i++ {
		y = math.FMA(y, r, c(i))
	}
	y = math.FMA(y, float64(r*r), r)
	y = float64(y + c(15))
	return float64(y * math.Float64frombits(uint64(int64(k)+1023)<<52))
}

// TestNEONExpBits checks exp32Slice and exp64Slice bit for bit against
// exp32NEONRef and exp64NEONRef on grids, random values and edges (the low
// bound, NaN, infinities, -0, values above 0), and that a rest shorter than
// the kernels' 16 (8) values is left as it is.
func TestNEONExpBits(t *testing.T) {
	skipWithoutNEON(t)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, m := range []int{48, 96, 1 << 14} {
		x32 := expInputs[float32](m, -100, rng)
		x32[m-1], x32[m-2], x32[m-3] = expLoNEON32, math.Nextafter32(expLoNEON32, 0), math.Nextafter32(expLoNEON32, -1)
		y32 := slices.Clone(x32)
		exp32Slice(y32)
		for i, v := range x32 {
			if want := exp32NEONRef(v); math.Float32bits(y32[i]) != math.Float32bits(want) {
				t.Fatalf("m=%d: exp32Slice(%v) = %v (%#x), reference %v (%#x)", m, v, y32[i], math.Float32bits(y32[i]), want, math.Float32bits(want))
			}
		}
		x64 := expInputs[float64](m/2, -750, rng)
		x64[m/2-1], x64[m/2-2] = expLoNEON64, math.Nextafter(expLoNEON64, math.Inf(-1))
		y64 := slices.Clone(x64)
		exp64Slice(y64)
		for i, v := range x64 {
			if want := exp64NEONRef(v); math.Float64bits(y64[i]) != math.Float64bits(want) {
				t.Fatalf("m=%d: exp64Slice(%v) = %v, reference %v", m/2, v, y64[i], want)
			}
		}
	}
	y32 := slices.Repeat([]float32{-1}, 20)
	exp32Slice(y32)
	if y32[15] != exp32NEONRef(-1) || y32[16] != -1 || y32[19] != -1 {
		t.Errorf("exp32Slice on 20 values: %v", y32)
	}
	y64 := slices.Repeat([]float64{-1}, 11)
	exp64Slice(y64)
	if y64[7] != exp64NEONRef(-1) || y64[8] != -1 || y64[10] != -1 {
		t.Errorf("exp64Slice on 11 values: %v", y64)
	}
}

// TestNEONExpError measures the NEON exp's largest relative error against
// math.Exp where the result is a normal number, from the low bound to 0,
// and checks that below the low bound it gives exactly 0.
func TestNEONExpError(t *testing.T) {
	skipWithoutNEON(t)
	rng := rand.New(rand.NewPCG(23, 24))
	const m = 1 << 16
	x32, x64 := make([]float32, m), make([]float64, m)
	for i := range m {
		if i%2 == 0 {
			x32[i], x64[i] = expLoNEON32*float32(i)/m, expLoNEON64*float64(i)/m
		} else {
			x32[i], x64[i] = -float32(rng.ExpFloat64()), -rng.ExpFloat64()
		}
	}
	y32, y64 := slices.Clone(x32), slices.Clone(x64)
	exp32Slice(y32)
	exp64Slice(y64)
	var worst32, worst64 float64
	for i := range m {
		want := math.Exp(float64(x32[i]))
		worst32 = max(worst32, math.Abs(float64(y32[i])-want)/want)
		want = math.Exp(x64[i])
		worst64 = max(worst64, math.Abs(y64[i]-want)/want)
	}
	t.Logf("max relative error: float32 %.3g on [%v, 0], float64 %.3g on [%v, 0]", worst32, expLoNEON32, worst64, expLoNEON64)
	if worst32 > 2e-7 || worst64 > 2e-15 {
		t.Errorf("max relative error %g (float32), %g (float64); want <= 2e-7, 2e-15", worst32, worst64)
	}
	low32 := []float32{expLoNEON32 - 1e-3, -88, -100, -1e30, -150, -200, -1e4, float32(math.Inf(-1)), 0, 0, 0, 0, 0, 0, 0, 0}
	exp32Slice(low32)
	low64 := []float64{expLoNEON64 - 1e-9, -709, -745, -1e300, -1100, -2000, math.Inf(-1), 0}
	exp64Slice(low64)
	for i := range 8 {
		if low32[i] != 0 || i < 7 && low64[i] != 0 {
			t.Errorf("below the low bound, case %d: %v, %v, want 0", i, low32[i], low64[i])
		}
	}
}

// genRefNEON32 is genTile32's arithmetic in pure Go: dot8x8NEON's (as
// genRef32), then exp32NEONRef; x (hp×p, row-major) the rows' features.
func genRefNEON32(t []float32, hp, wp int, x, xt []float32, p int, gr, gc []float32, tg float32) {
	for r := range hp {
		for c := range wp {
			var acc float32
			for q := range p {
				acc = fma32(x[r*p+q], xt[q*wp+c], acc)
			}
			t[r*wp+c] = exp32NEONRef(fma32(acc, tg, gc[c]+gr[r]))
		}
	}
}

// TestNEONGen checks genTile32 and genTile64 bit for bit against their
// arithmetic in pure Go, for feature counts 0, 1, 3, 16, 17 and 37.
func TestNEONGen(t *testing.T) {
	skipWithoutNEON(t)
	rng := rand.New(rand.NewPCG(25, 26))
	const gamma = 0.1
	for _, tc := range []struct{ hp, wp, p int }{{8, 16, 0}, {8, 16, 1}, {16, 48, 3}, {32, 64, 16}, {24, 32, 17}, {48, 80, 37}} {
		x, xt := randomSlice(tc.hp*tc.p, rng.NormFloat64), randomSlice(tc.p*tc.wp, rng.NormFloat64)
		g := func() float64 { return -gamma * 3 * rng.Float64() }
		gr, gc := randomSlice(tc.hp, g), randomSlice(tc.wp, g)
		gr[0] = -200 // a row whose entries fall below the low bound
		x32, xt32, gr32, gc32 := to32(x), to32(xt), to32(gr), to32(gc)
		xr32, xr := make([]float32, tc.hp*tc.p), make([]float64, tc.hp*tc.p)
		if tc.p > 0 {
			packRows(xr32, x32, tc.p, 8)
			packRows(xr, x, tc.p, 8)
		}

		got32, want32 := make([]float32, tc.hp*tc.wp), make([]float32, tc.hp*tc.wp)
		neonDense.genTile32(got32, tc.hp, tc.wp, xr32, xt32, tc.p, gr32, gc32, 2*gamma)
		genRefNEON32(want32, tc.hp, tc.wp, x32, xt32, tc.p, gr32, gc32, 2*gamma)
		for i := range got32 {
			if math.Float32bits(got32[i]) != math.Float32bits(want32[i]) {
				t.Fatalf("%+v float32: t[%d][%d] = %v, reference %v", tc, i/tc.wp, i%tc.wp, got32[i], want32[i])
			}
		}

		got := make([]float64, tc.hp*tc.wp)
		neonDense.genTile64(got, tc.hp, tc.wp, xr, xt, tc.p, gr, gc, 2*gamma)
		for r := range tc.hp {
			for c := range tc.wp {
				var acc float64
				for q := range tc.p {
					acc = math.FMA(x[r*tc.p+q], xt[q*tc.wp+c], acc)
				}
				want := exp64NEONRef(math.FMA(acc, 2*gamma, gc[c]+gr[r]))
				if math.Float64bits(got[r*tc.wp+c]) != math.Float64bits(want) {
					t.Fatalf("%+v float64: t[%d][%d] = %v, reference %v", tc, r, c, got[r*tc.wp+c], want)
				}
			}
		}
	}
}

// to32 rounds x to float32.
func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

// TestNEONGemm checks the P·W micro-kernels through gemmTile32 and
// gemmTile64 bit for bit against their arithmetic (gemmRef32; each float64
// product rounded, then added in order), in both modes (add and set) and
// both access patterns of the tile, with inner lengths around the flush
// interval and column counts of one and several blocks.
func TestNEONGemm(t *testing.T) {
	skipWithoutNEON(t)
	rng := rand.New(rand.NewPCG(27, 28))
	for _, tc := range []gemmCase{
		{name: "kp=8", m: 8, kp: 8, inner: 4},
		{name: "kp=16", m: 16, kp: 16, inner: 64},
		{name: "kp=24", m: 8, kp: 24, inner: 68},
		{name: "kp=112", m: 24, kp: 112, inner: 200},
		{name: "kp=8/transposed", m: 8, kp: 8, inner: 132, transposed: true},
		{name: "kp=48/transposed", m: 32, kp: 48, inner: 48, transposed: true},
		{name: "inner=0", m: 8, kp: 16, inner: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, rs, is := operands(tc, rng.Float32)
			got := randomSlice(tc.m*tc.kp, rng.Float64)
			want := slices.Clone(got)
			neonDense.gemmTile32(got, tc.kp, a, rs, is, b, tc.m, tc.inner, true)
			gemmRef32(want, tc.kp, a, rs, is, b, tc.kp, tc.m, tc.kp, tc.inner)
			set := slices.Repeat([]float64{math.NaN()}, len(got))
			neonDense.gemmTile32(set, tc.kp, a, rs, is, b, tc.m, tc.inner, false)
			zero := make([]float64, len(got))
			gemmRef32(zero, tc.kp, a, rs, is, b, tc.kp, tc.m, tc.kp, tc.inner)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) || math.Float64bits(set[i]) != math.Float64bits(zero[i]) {
					t.Fatalf("float32: y[%d][%d] = %v (add), %v (set); reference %v, %v", i/tc.kp, i%tc.kp, got[i], set[i], want[i], zero[i])
				}
			}

			a64, b64, rs, is := operands(tc, rng.Float64)
			set64 := slices.Repeat([]float64{math.NaN()}, len(got))
			neonDense.gemmTile64(set64, tc.kp, a64, rs, is, b64, tc.m, tc.inner)
			for r := range tc.m {
				for c := range tc.kp {
					var acc float64
					for s := range tc.inner {
						acc += float64(a64[r*rs+s*is] * b64[s*tc.kp+c]) // no fused multiply-add
					}
					if got := set64[r*tc.kp+c]; math.Float64bits(got) != math.Float64bits(acc) {
						t.Fatalf("float64: y[%d][%d] = %v, reference %v", r, c, got, acc)
					}
				}
			}
		})
	}
	// The float64 kernels' add mode, on one block.
	a, b := randomSlice(8*6, rng.Float64), randomSlice(6*4, rng.Float64)
	y := randomSlice(8*4, rng.Float64)
	want := slices.Clone(y)
	gemm64x8x4RowsNEON(&y[0], 4, &a[0], 6, &b[0], 4, 6, true)
	for r := range 8 {
		var acc float64
		for c := range 4 {
			acc = 0
			for s := range 6 {
				acc += float64(a[r*6+s] * b[s*4+c])
			}
			if w := want[r*4+c] + acc; y[r*4+c] != w {
				t.Fatalf("float64 add: y[%d][%d] = %v, reference %v", r, c, y[r*4+c], w)
			}
		}
	}
}

// consumeNEONRef is the NEON consume16's arithmetic in pure Go: the
// accumulators as consumeRef adds them (rows in order for accC, columns
// in order for accR), the squares into 8 lanes by the row's parity and the
// column's place in its group of 4, in 4×4 blocks (rows outer), the lanes
// then summed as consumeOneHot32 sums them.
func consumeNEONRef(t []float32, hp, wp int, sr, sc []int32, accR, accC []float64, diag, frob bool) float64 {
	var sq [8]float64
	for i0 := 0; i0 < hp; i0 += 4 {
		for j0 := 0; j0 < wp; j0 += 4 {
			for i := i0; i < i0+4; i++ {
				for j := j0; j < j0+4; j++ {
					v := float64(t[i*wp+j])
					if !diag {
						accC[int(sr[i])*wp+j] += v
					}
					if frob {
						l := i%2*4 + j%4
						sq[l] = math.FMA(v, v, sq[l])
					}
				}
			}
			for j := j0; j < j0+4; j++ {
				for i := i0; i < i0+4; i++ {
					accR[int(sc[j])*hp+i] += float64(t[i*wp+j])
				}
			}
		}
	}
	if !frob {
		return 0
	}
	return ((sq[0] + sq[1]) + (sq[2] + sq[3])) + ((sq[4] + sq[5]) + (sq[6] + sq[7]))
}

// TestNEONConsumeOneHot32 checks the one-hot consumer bit for bit against
// consumeNEONRef: P·S classes (k = 1, 3, 17, repeated classes in a block)
// and row sums, on and off the diagonal, with and without squares.
func TestNEONConsumeOneHot32(t *testing.T) {
	skipWithoutNEON(t)
	rng := rand.New(rand.NewPCG(29, 30))
	for _, tc := range []struct {
		hp, wp, k  int
		diag, frob bool
	}{
		{16, 16, 1, false, true}, {32, 48, 3, false, false}, {48, 32, 3, true, false},
		{64, 64, 1, true, true}, {16, 80, 17, false, true}, {80, 16, 17, false, false},
	} {
		tl := randomSlice(tc.hp*tc.wp, rng.Float32)
		cls := func() int32 { return int32(rng.IntN(tc.k)) }
		sr, sc := randomSlice(tc.hp, cls), randomSlice(tc.wp, cls)
		accR, accC := randomSlice(tc.k*tc.hp, rng.Float64), randomSlice(tc.k*tc.wp, rng.Float64)
		wantR, wantC := slices.Clone(accR), slices.Clone(accC)
		got := neonDense.consumeOneHot32(tl, tc.hp, tc.wp, sr, sc, accR, accC, tc.diag, tc.frob)
		want := consumeNEONRef(tl, tc.hp, tc.wp, sr, sc, wantR, wantC, tc.diag, tc.frob)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%+v: squares %v, reference %v", tc, got, want)
		}
		for i := range accR {
			if math.Float64bits(accR[i]) != math.Float64bits(wantR[i]) {
				t.Fatalf("%+v: accR[%d] = %v, reference %v", tc, i, accR[i], wantR[i])
			}
		}
		for i := range accC {
			if math.Float64bits(accC[i]) != math.Float64bits(wantC[i]) {
				t.Fatalf("%+v: accC[%d] = %v, reference %v", tc, i, accC[i], wantC[i])
			}
		}
	}
}

// neonBound is the rounding bound of one entry of the NEON kernel against
// the portable one's: |P_neon - P_go| <= P_go·rel + abs, where rel =
// e + (p+10)·u·N, N = gamma·(|c_i|² + |c_j|²) for the centred features c,
// u the unit roundoff (2⁻²⁴ in float32, 2⁻⁵³ in float64) and e the exp's
// error with the final rounding (3e-7, 4e-15). The (p+10)·u·N term bounds
// the error of the exponent by the norms identity: p for the dot product's
// chain of fused multiply-adds, 4 for the centring, 5 for -gamma·|c|²,
// their sum and the last fused multiply-add (to first order). abs is where
// the NEON exp gives 0, e^lo (2⁻¹²⁵ and 2⁻¹⁰²¹ bound it).
func neonBound(prec Precision, p int, gamma, ni, nj float64) (rel, abs float64) {
	if prec == Float32 {
		return 3e-7 + float64(p+10)*0x1p-24*gamma*(ni+nj), 0x1p-125
	}
	return 4e-15 + float64(p+10)*0x1p-53*gamma*(ni+nj), 0x1p-1021
}

// centredNorms returns |x_i - mean|² for the rows of x (n×p).
func centredNorms(x []float64, n, p int) []float64 {
	mean := ColumnMeans(x, n, p)
	norms := make([]float64, n)
	for i := range n {
		for q := range p {
			d := x[i*p+q] - mean[q]
			norms[i] += d * d
		}
	}
	return norms
}

// TestNEONMatchesPortable runs every pass and Engine.Tile through the NEON
// kernel and the portable one, in both precisions, for sizes that leave
// ragged tiles (n not a multiple of 8 or 16), p = 1, 3, 16, 17, k = 1, 3,
// 17, 100, and checks each tile entry against neonBound. The passes' sums
// have nonnegative terms (W >= 0), so their relative error is bounded by
// the entries' largest, rel, plus the sums' own roundings: n·2⁻⁵² for the
// float64 accumulations, and for the float32 P·W W rounded to float32 and
// partial sums of flushEvery products in float32, (flushEvery+2)·2⁻²⁴;
// ||P||_F² doubles rel.
func TestNEONMatchesPortable(t *testing.T) {
	skipWithoutNEON(t)
	for _, tc := range []struct {
		n, p, k int
		gamma   float64
		blocks  []int
	}{
		{n: 45, p: 1, k: 1, gamma: 2, blocks: []int{13, 45}},
		{n: 157, p: 3, k: 3, gamma: 0.3, blocks: []int{16, 64}},
		{n: 130, p: 16, k: 17, gamma: 0.05, blocks: []int{33, 100}},
		{n: 77, p: 17, k: 100, gamma: 0.04, blocks: []int{24}},
	} {
		x := randomFeatures(tc.n, tc.p, uint64(tc.n))
		for i := range x {
			x[i] += 40 // far from the origin: the kernel must centre
		}
		norms := centredNorms(x, tc.n, tc.p)
		W, s, _ := randomW(tc.n, tc.k, 5)
		for _, prec := range []Precision{Float32, Float64} {
			src, err := NewGaussianPrecision(x, tc.n, tc.p, tc.gamma, prec)
			if err != nil {
				t.Fatal(err)
			}
			for _, block := range tc.blocks {
				neon := &Engine{Source: src, BlockSize: block, Workers: 2, ISA: ISANEON}
				port := &Engine{Source: src, BlockSize: block, Workers: 2, ISA: ISAGo}
				name := fmt.Sprintf("n=%d/p=%d/k=%d/%s/block=%d", tc.n, tc.p, tc.k, neon.Kernel(), block)
				t.Run(name, func(t *testing.T) {
					if want := "neon/" + prec.String(); neon.Kernel() != want || neon.VectorFamily() != "neon" {
						t.Fatalf("Kernel() = %q, VectorFamily() = %q; want %q, neon", neon.Kernel(), neon.VectorFamily(), want)
					}
					rel := checkNEONTiles(t, neon, prec, tc.p, tc.gamma, norms, block)
					checkNEONPasses(t, neon, port, W.RawMatrix().Data, s, tc.k, prec, rel)
				})
			}
		}
	}
}

// checkNEONTiles compares Engine.Tile of the NEON kernel with the
// portable Source.Tile entry by entry against neonBound, on the diagonal
// tiles and the off-diagonal ones of the block grid and on one tile that
// is not on it, and returns the largest relative bound it used. It logs
// the largest error as a fraction of its bound.
func checkNEONTiles(t *testing.T, e *Engine, prec Precision, p int, gamma float64, norms []float64, b int) float64 {
	t.Helper()
	n := e.N()
	type rect struct{ r0, r1, c0, c1 int }
	rects := []rect{{3, min(n, 20), 5, min(n, 41)}}
	for r0 := 0; r0 < n; r0 += b {
		for c0 := r0; c0 < n; c0 += b {
			rects = append(rects, rect{r0, min(n, r0+b), c0, min(n, c0+b)})
		}
	}
	var worst, maxRel float64
	for _, rc := range rects {
		h, w := rc.r1-rc.r0, rc.c1-rc.c0
		got, want := make([]float64, h*w), make([]float64, h*w)
		if err := e.Tile(got, rc.r0, rc.r1, rc.c0, rc.c1); err != nil {
			t.Fatal(err)
		}
		if err := e.Source.Tile(want, rc.r0, rc.r1, rc.c0, rc.c1); err != nil {
			t.Fatal(err)
		}
		for i := range h {
			for j := range w {
				rel, abs := neonBound(prec, p, gamma, norms[rc.r0+i], norms[rc.c0+j])
				maxRel = max(maxRel, rel)
				g, v := got[i*w+j], want[i*w+j]
				bound := v*rel + abs
				worst = max(worst, math.Abs(g-v)/bound)
				if !(math.Abs(g-v) <= bound) {
					t.Fatalf("tile %+v: P[%d][%d] = %v, portable %v, bound %.3g", rc, rc.r0+i, rc.c0+j, g, v, bound)
				}
			}
		}
	}
	t.Logf("tiles: largest error %.3g of its bound (largest relative bound %.3g)", worst, maxRel)
	return maxRel
}

// checkNEONPasses compares the passes of the NEON Engine (P·W with row
// sums and ||P||_F², P·S, the statistics alone) with the portable one's,
// each value within the bound TestNEONMatchesPortable states.
func checkNEONPasses(t *testing.T, neon, port *Engine, w []float64, s []int32, k int, prec Precision, rel float64) {
	t.Helper()
	ctx := context.Background()
	n := neon.N()
	sums := rel + float64(n)*0x1p-52
	pw := sums
	if prec == Float32 {
		pw += (flushEvery + 2) * 0x1p-24
	}
	type pass struct {
		y, rows []float64
		frob    float64
	}
	run := func(e *Engine) (mul, oneHot, stats pass) {
		mul = pass{y: make([]float64, n*k), rows: make([]float64, n)}
		oneHot.y = make([]float64, n*k)
		stats.rows = make([]float64, n)
		var err [3]error
		mul.frob, err[0] = e.Mul(ctx, mul.y, w, k, mul.rows)
		err[1] = e.MulOneHot(ctx, oneHot.y, s, k)
		stats.frob, err[2] = e.Stats(ctx, stats.rows)
		for _, err := range err {
			if err != nil {
				t.Fatal(err)
			}
		}
		return mul, oneHot, stats
	}
	gm, go1, gs := run(neon)
	wm, wo, ws := run(port)
	within := func(what string, got, want []float64, bound float64) {
		for i := range got {
			if !(math.Abs(got[i]-want[i]) <= bound*math.Abs(want[i])) {
				t.Fatalf("%s[%d] = %v, portable %v: relative difference %.3g, bound %.3g", what, i, got[i], want[i], math.Abs(got[i]-want[i])/want[i], bound)
			}
		}
	}
	within("P·W", gm.y, wm.y, pw)
	within("P·W row sums", gm.rows, wm.rows, sums)
	within("P·W ||P||²", []float64{gm.frob}, []float64{wm.frob}, 2*sums)
	within("P·S", go1.y, wo.y, sums)
	within("row sums", gs.rows, ws.rows, sums)
	within("||P||²", []float64{gs.frob}, []float64{ws.frob}, 2*sums)
}
