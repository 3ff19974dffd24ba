//go:build goexperiment.simd && amd64

package tile

import (
	"math"
	"math/rand/v2"
	"simd/archsimd"
	"slices"
	"testing"
	"time"
)

// skipWithoutAVX512 skips tb on CPUs without AVX-512, where the vectorized
// kernels are not used.
func skipWithoutAVX512(tb testing.TB) {
	tb.Helper()
	if !simdUsable() {
		tb.Skip("this CPU has no AVX-512")
	}
}

// TestVectorExpError measures the vectorized exp's largest relative error
// against math.Exp over the range the kernel uses, where the result is a
// normal number: [-87, 0] in float32, [-708, 0] in float64 (below, results
// fade through the subnormals to 0, as math.Exp's do).
func TestVectorExpError(t *testing.T) {
	skipWithoutAVX512(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const m = 1 << 18
	t.Run("float32", func(t *testing.T) {
		x := make([]float32, m)
		for i := range x {
			if i%2 == 0 {
				x[i] = -87 * float32(i) / m // a grid
			} else {
				x[i] = -float32(rng.ExpFloat64()) // dense near 0, where P lives
			}
		}
		x[0], x[1] = 0, -1e-30
		y := append([]float32(nil), x...)
		exp32Slice(y)
		var worst float64
		for i, v := range x {
			want := math.Exp(float64(v))
			worst = max(worst, math.Abs(float64(y[i])-want)/want)
		}
		t.Logf("float32 exp: max relative error %.3g on [-87, 0] (float32 rounding alone: 6e-8)", worst)
		if worst > 2e-7 {
			t.Errorf("max relative error %g, want <= 2e-7", worst)
		}
	})
	t.Run("float64", func(t *testing.T) {
		x := make([]float64, m)
		for i := range x {
			if i%2 == 0 {
				x[i] = -708 * float64(i) / m
			} else {
				x[i] = -rng.ExpFloat64()
			}
		}
		y := append([]float64(nil), x...)
		exp64Slice(y)
		var worst float64
		for i, v := range x {
			want := math.Exp(v)
			worst = max(worst, math.Abs(y[i]-want)/want)
		}
		t.Logf("float64 exp: max relative error %.3g on [-708, 0]", worst)
		if worst > 2e-15 {
			t.Errorf("max relative error %g, want <= 2e-15", worst)
		}
	})
	t.Run("clamp", func(t *testing.T) {
		y32 := []float32{-200, -1e30, 1, 0, -150, -104, -1e-3, 5, 1e30, -1, -2, -3, -4, -5, -6, -7}
		exp32Slice(y32)
		for i, want := range []float32{0, 0, 1, 1, 0} {
			if y32[i] != want {
				t.Errorf("exp32 at case %d = %v, want %v", i, y32[i], want)
			}
		}
		y64 := []float64{-2000, -1e300, 1, 0, -1100, -745.2, -1e-3, 5}
		exp64Slice(y64)
		for i, want := range []float64{0, 0, 1, 1, 0, 0} {
			if y64[i] != want {
				t.Errorf("exp64 at case %d = %v, want %v", i, y64[i], want)
			}
		}
	})
}

// gemmRef32 is the arithmetic the assembly micro-kernels promise, one row
// and 16 columns at a time in archsimd: y[r*ldy+c] += the float32 fused
// multiply-adds of a[r*rs+s*is]·b[s*ldb+c] in s order, widened and added
// every flushEvery steps.
func gemmRef32(y []float64, ldy int, a []float32, rs, is int, b []float32, ldb, m, cols, inner int) {
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

// gemmCase is a test case of the P·W micro-kernels: an m×inner matrix a
// times an inner×kp matrix b, with a read as the tile's rows (rs = inner,
// is = 1) or, if transposed, as its columns (rs = 1, is = m).
type gemmCase struct {
	name         string
	m, kp, inner int
	transposed   bool
}

// operands returns random a and b of the case's sizes, of the given
// draws, and a's strides.
func operands[F float32 | float64](tc gemmCase, draw func() F) (a, b []F, rs, is int) {
	a = randomSlice(tc.m*tc.inner, draw)
	b = randomSlice(tc.inner*tc.kp, func() F { return draw() - 0.25 })
	if tc.transposed {
		return a, b, 1, tc.m
	}
	return a, b, tc.inner, 1
}

// TestGemmMicroKernels checks the assembly P·W micro-kernels bit for bit
// against gemmRef32, for every column count they are combined into, inner
// lengths around the flush interval, and both access patterns of the tile
// (rows: rs = stride, is = 1; columns: rs = 1, is = stride).
func TestGemmMicroKernels(t *testing.T) {
	skipWithoutAVX512(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []gemmCase{
		{name: "kp=16", m: 8, kp: 16, inner: 5},
		{name: "kp=32", m: 16, kp: 32, inner: 64},
		{name: "kp=48", m: 8, kp: 48, inner: 65},
		{name: "kp=112", m: 24, kp: 112, inner: 200},
		{name: "kp=80/transposed", m: 16, kp: 80, inner: 130, transposed: true},
		{name: "kp=96/transposed", m: 32, kp: 96, inner: 48, transposed: true},
		{name: "inner=1", m: 8, kp: 64, inner: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, rs, is := operands(tc, rng.Float32)
			got := randomSlice(tc.m*tc.kp, rng.Float64)
			want := append([]float64(nil), got...)
			gemmTile32(got, tc.kp, a, rs, is, b, tc.m, tc.inner, true)
			gemmRef32(want, tc.kp, a, rs, is, b, tc.kp, tc.m, tc.kp, tc.inner)
			// Without add, the product overwrites y.
			set := slices.Repeat([]float64{math.NaN()}, len(got))
			gemmTile32(set, tc.kp, a, rs, is, b, tc.m, tc.inner, false)
			zero := make([]float64, len(got))
			gemmRef32(zero, tc.kp, a, rs, is, b, tc.kp, tc.m, tc.kp, tc.inner)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("add: y[%d][%d] = %v, reference %v", i/tc.kp, i%tc.kp, got[i], want[i])
				}
				if math.Float64bits(set[i]) != math.Float64bits(zero[i]) {
					t.Fatalf("set: y[%d][%d] = %v, reference %v", i/tc.kp, i%tc.kp, set[i], zero[i])
				}
			}
		})
	}
}

// genRef32 is the arithmetic the Gaussian micro-kernels promise, one row
// and 16 columns at a time in archsimd, followed by the vectorized exp:
// t[r][c] = exp(tg·(float32 FMA chain of x_r·x_c) + (gc[c] + gr[r])), with
// x (hp×p, row-major) the rows' features.
func genRef32(t []float32, hp, wp int, x, xt []float32, p int, gr, gc []float32, tg float32) {
	tgv := archsimd.BroadcastFloat32x16(tg)
	for r := range hp {
		for c0 := 0; c0 < wp; c0 += 16 {
			var acc archsimd.Float32x16
			for q := range p {
				acc = archsimd.BroadcastFloat32x16(x[r*p+q]).MulAdd(archsimd.LoadFloat32x16Slice(xt[q*wp+c0:]), acc)
			}
			g := archsimd.LoadFloat32x16Slice(gc[c0:]).Add(archsimd.BroadcastFloat32x16(gr[r]))
			acc.MulAdd(tgv, g).StoreSlice(t[r*wp+c0:])
		}
	}
	exp32Slice(t[:hp*wp])
	archsimd.ClearAVXUpperBits()
}

// TestGenMicroKernels checks the assembly Gaussian micro-kernels, through
// genTile32, bit for bit against genRef32, for tile shapes that use both
// kernels and feature counts from 1 to 37.
func TestGenMicroKernels(t *testing.T) {
	skipWithoutAVX512(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name      string
		hp, wp, p int
	}{
		{name: "16x16/p=1", hp: 16, wp: 16, p: 1},
		{name: "16x48/p=3", hp: 16, wp: 48, p: 3},
		{name: "32x64/p=16", hp: 32, wp: 64, p: 16},
		{name: "48x80/p=37", hp: 48, wp: 80, p: 37},
	} {
		t.Run(tc.name, func(t *testing.T) {
			normal := func() float32 { return float32(rng.NormFloat64()) }
			x, xt := randomSlice(tc.hp*tc.p, normal), randomSlice(tc.p*tc.wp, normal)
			const gamma = 0.1
			g := func() float32 { return float32(-gamma * 3 * rng.Float64()) }
			gr, gc := randomSlice(tc.hp, g), randomSlice(tc.wp, g)
			xr := make([]float32, tc.hp*tc.p)
			packRows(xr, x, tc.p, 8)
			got := make([]float32, tc.hp*tc.wp)
			genTile32(got, tc.hp, tc.wp, xr, xt, tc.p, gr, gc, 2*gamma)
			want := make([]float32, tc.hp*tc.wp)
			genRef32(want, tc.hp, tc.wp, x, xt, tc.p, gr, gc, 2*gamma)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("t[%d][%d] = %v, reference %v", i/tc.wp, i%tc.wp, got[i], want[i])
				}
			}
		})
	}
}

// BenchmarkMicroKernels measures the assembly micro-kernels on one
// cache-resident 256×256 tile, in flop/s of wall and of CPU time (2 flops
// per multiply-add; the Gaussian kernel at p = 16, the gemm at kp = 112 as
// for k = 100), for comparison with FMAPeak.
func BenchmarkMicroKernels(b *testing.B) {
	skipWithoutAVX512(b)
	const m, p, kp = 256, 16, 112
	rng := rand.New(rand.NewPCG(7, 8))
	t, w := randomSlice(m*m, rng.Float32), randomSlice(m*kp, rng.Float32)
	y := make([]float64, m*kp)
	xr, xt := make([]float32, m*p), make([]float32, p*m)
	g := make([]float32, m)
	report := func(b *testing.B, flops float64, cpu0 time.Duration) {
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds(), "flop/s")
		if cpu := processCPU() - cpu0; cpu > 0 {
			b.ReportMetric(flops*float64(b.N)/cpu.Seconds(), "flop/cpu-s")
		}
	}
	b.Run("gemm/rows", func(b *testing.B) {
		cpu0 := processCPU()
		for b.Loop() {
			gemmTile32(y, kp, t, m, 1, w, m, m, false)
		}
		report(b, 2*m*m*kp, cpu0)
	})
	b.Run("gemm/cols", func(b *testing.B) {
		cpu0 := processCPU()
		for b.Loop() {
			gemmTile32(y, kp, t, 1, m, w, m, m, false)
		}
		report(b, 2*m*m*kp, cpu0)
	})
	b.Run("gen/p=16", func(b *testing.B) {
		cpu0 := processCPU()
		for b.Loop() {
			genTile32(t, m, m, xr, xt, p, g, g, 0.1)
		}
		report(b, 2*m*m*p, cpu0)
	})
	b.Run("fma-peak", func(b *testing.B) {
		probe, err := fmaProbeOf(ISAAVX512, Float32)
		if err != nil {
			b.Fatal(err)
		}
		run := probe.runner(Float32)
		cpu0 := processCPU()
		for b.Loop() {
			run(1 << 16)
		}
		report(b, probe.flopsPerIter()*(1<<16), cpu0)
	})
}

// TestGemm64MicroKernels checks the float64 P·W micro-kernels bit for bit
// against their arithmetic, the portable consumer's (each product rounded,
// then added in order), in both modes (store and add) and both access
// patterns of the tile.
func TestGemm64MicroKernels(t *testing.T) {
	skipWithoutAVX512(t)
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []gemmCase{
		{name: "kp=8", m: 8, kp: 8, inner: 3},
		{name: "kp=16", m: 16, kp: 16, inner: 70},
		{name: "kp=24", m: 8, kp: 24, inner: 1},
		{name: "kp=104", m: 24, kp: 104, inner: 130},
		{name: "kp=40/transposed", m: 16, kp: 40, inner: 33, transposed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, rs, is := operands(tc, rng.Float64)
			want := make([]float64, tc.m*tc.kp)
			for r := range tc.m {
				for c := range tc.kp {
					var acc float64
					for s := range tc.inner {
						acc += float64(a[r*rs+s*is] * b[s*tc.kp+c]) // no fused multiply-add
					}
					want[r*tc.kp+c] = acc
				}
			}
			set := slices.Repeat([]float64{math.NaN()}, len(want))
			gemmTile64(set, tc.kp, a, rs, is, b, tc.m, tc.inner)
			// The add mode, on the 8×8 block at the top left.
			add := make([]float64, len(want))
			for i := range add {
				add[i] = float64(i)
			}
			gemm64x8x1(&add[0], tc.kp, &a[0], rs, is, &b[0], tc.kp, tc.inner, true)
			for i := range want {
				if math.Float64bits(set[i]) != math.Float64bits(want[i]) {
					t.Fatalf("y[%d][%d] = %v, reference %v", i/tc.kp, i%tc.kp, set[i], want[i])
				}
				r, c := i/tc.kp, i%tc.kp
				wantAdd := float64(i)
				if r < 8 && c < 8 {
					wantAdd += want[i]
				}
				if math.Float64bits(add[i]) != math.Float64bits(wantAdd) {
					t.Fatalf("add: y[%d][%d] = %v, reference %v", r, c, add[i], wantAdd)
				}
			}
		})
	}
}

func TestUp32(t *testing.T) {
	for _, v := range []float64{0, 1, 1.0 / 3, -1.0 / 3, -1, 0x1p-126, -0x1p-126, 3.4028235677973366e38, math.MaxFloat64, math.Inf(1), -math.Inf(1), 1e300} {
		f := up32(v)
		if float64(f) < v {
			t.Errorf("up32(%v) = %v, below it", v, f)
		}
		if !math.IsInf(float64(f), 0) && float64(f) > v+math.Abs(v)*0x1p-21 {
			t.Errorf("up32(%v) = %v, more than 2⁻²¹|v| above it", v, f)
		}
	}
}
