//go:build amd64

package tile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// skipWithoutAVX512 skips tb on CPUs without AVX-512, where the AVX-512
// kernels are not used.
func skipWithoutAVX512(tb testing.TB) {
	tb.Helper()
	if !cpuHas(ISAAVX512) {
		tb.Skip("this CPU has no AVX-512")
	}
}

// denseKernelsHere returns the dense kernel families this CPU runs, fastest
// first, or skips tb if it runs none (neither AVX-512 nor AVX2 with FMA).
// The tests run every kernel of every family against the same reference:
// the families give the same bits.
func denseKernelsHere(tb testing.TB) []*denseKernels {
	tb.Helper()
	var fams []*denseKernels
	for _, fam := range denseTables {
		if cpuHas(fam.isa) {
			fams = append(fams, fam)
		}
	}
	if len(fams) == 0 {
		tb.Skip("this CPU has neither AVX-512 nor AVX2 with FMA: no dense vector kernel runs")
	}
	return fams
}

// TestVectorExpError measures the vectorized exps' largest relative error
// against math.Exp over the range the kernel uses, where the result is a
// normal number: [-87, 0] in float32, [-708, 0] in float64 (below, results
// fade through the subnormals to 0, as math.Exp's do).
func TestVectorExpError(t *testing.T) {
	for _, fam := range denseKernelsHere(t) {
		t.Run(fam.isa.String(), func(t *testing.T) { testVectorExpError(t, fam) })
	}
}

func testVectorExpError(t *testing.T, fam *denseKernels) {
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
		fam.exp32(y)
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
		fam.exp64(y)
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
		fam.exp32(y32)
		for i, want := range []float32{0, 0, 1, 1, 0} {
			if y32[i] != want {
				t.Errorf("exp32 at case %d = %v, want %v", i, y32[i], want)
			}
		}
		y64 := []float64{-2000, -1e300, 1, 0, -1100, -745.2, -1e-3, 5}
		fam.exp64(y64)
		for i, want := range []float64{0, 0, 1, 1, 0, 0} {
			if y64[i] != want {
				t.Errorf("exp64 at case %d = %v, want %v", i, y64[i], want)
			}
		}
	})
}

// TestGemmMicroKernels checks the assembly P·W micro-kernels of every
// family bit for bit against gemmRef32, for every column count they are
// combined into, inner lengths around the flush interval, and both access
// patterns of the tile (rows: rs = stride, is = 1; columns: rs = 1, is =
// stride).
func TestGemmMicroKernels(t *testing.T) {
	for _, fam := range denseKernelsHere(t) {
		t.Run(fam.isa.String(), func(t *testing.T) { testGemmMicroKernels(t, fam) })
	}
}

func testGemmMicroKernels(t *testing.T, fam *denseKernels) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []gemmCase{
		{name: "kp=16", m: 8, kp: 16, inner: 5},
		{name: "kp=32", m: 16, kp: 32, inner: 64},
		{name: "kp=48", m: 8, kp: 48, inner: 65},
		{name: "kp=112", m: 24, kp: 112, inner: 200},
		{name: "kp=80/transposed", m: 16, kp: 80, inner: 130, transposed: true},
		{name: "kp=96/transposed", m: 32, kp: 96, inner: 48, transposed: true},
		{name: "inner=1", m: 8, kp: 64, inner: 1},
		{name: "m=4/kp=16", m: 4, kp: 16, inner: 17},
		{name: "kp=16/inner=3", m: 16, kp: 16, inner: 3, transposed: true},
	} {
		if tc.m%fam.rows != 0 {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			a, b, rs, is := operands(tc, rng.Float32)
			got := randomSlice(tc.m*tc.kp, rng.Float64)
			want := append([]float64(nil), got...)
			fam.gemmTile32(got, tc.kp, a, rs, is, b, tc.m, tc.inner, true)
			gemmRef32(want, tc.kp, a, rs, is, b, tc.kp, tc.m, tc.kp, tc.inner)
			// Without add, the product overwrites y.
			set := slices.Repeat([]float64{math.NaN()}, len(got))
			fam.gemmTile32(set, tc.kp, a, rs, is, b, tc.m, tc.inner, false)
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

// genRef32 is the arithmetic the Gaussian micro-kernels promise, in pure
// Go, followed by the vectorized exp's (exp32Ref):
// t[r][c] = exp(tg·(float32 FMA chain of x_r·x_c) + (gc[c] + gr[r])), with
// x (hp×p, row-major) the rows' features.
func genRef32(t []float32, hp, wp int, x, xt []float32, p int, gr, gc []float32, tg float32) {
	for r := range hp {
		for c := range wp {
			var acc float32
			for q := range p {
				acc = fma32(x[r*p+q], xt[q*wp+c], acc)
			}
			t[r*wp+c] = exp32Ref(fma32(acc, tg, gc[c]+gr[r]))
		}
	}
}

// TestGenMicroKernels checks the assembly Gaussian micro-kernels of every
// family, through genTile32 (with the exp), bit for bit against genRef32,
// for tile shapes that use every kernel of a family (AVX2: 24, 16 and 8
// columns) and feature counts from 0 to 37.
func TestGenMicroKernels(t *testing.T) {
	for _, fam := range denseKernelsHere(t) {
		t.Run(fam.isa.String(), func(t *testing.T) { testGenMicroKernels(t, fam) })
	}
}

func testGenMicroKernels(t *testing.T, fam *denseKernels) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name      string
		hp, wp, p int
	}{
		{name: "16x16/p=1", hp: 16, wp: 16, p: 1},
		{name: "16x48/p=3", hp: 16, wp: 48, p: 3},
		{name: "32x64/p=16", hp: 32, wp: 64, p: 16},
		{name: "8x32/p=17", hp: 8, wp: 32, p: 17},
		{name: "48x80/p=37", hp: 48, wp: 80, p: 37},
		{name: "16x32/p=0", hp: 16, wp: 32, p: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			normal := func() float32 { return float32(rng.NormFloat64()) }
			x, xt := randomSlice(tc.hp*tc.p, normal), randomSlice(tc.p*tc.wp, normal)
			const gamma = 0.1
			g := func() float32 { return float32(-gamma * 3 * rng.Float64()) }
			gr, gc := randomSlice(tc.hp, g), randomSlice(tc.wp, g)
			xr := make([]float32, tc.hp*tc.p)
			if tc.p > 0 {
				packRows(xr, x, tc.p, 8)
			}
			got := make([]float32, tc.hp*tc.wp)
			fam.genTile32(got, tc.hp, tc.wp, xr, xt, tc.p, gr, gc, 2*gamma)
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

// BenchmarkMicroKernels measures the assembly micro-kernels of every
// family on one cache-resident 256×256 tile, in flop/s of wall and of CPU
// time (2 flops per multiply-add; the Gaussian kernel at p = 16, the gemm
// at kp = 112 as for k = 100), for comparison with the family's FMAPeak.
func BenchmarkMicroKernels(b *testing.B) {
	for _, fam := range denseKernelsHere(b) {
		b.Run(fam.isa.String(), func(b *testing.B) { benchmarkMicroKernels(b, fam) })
	}
}

func benchmarkMicroKernels(b *testing.B, fam *denseKernels) {
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
			fam.gemmTile32(y, kp, t, m, 1, w, m, m, false)
		}
		report(b, 2*m*m*kp, cpu0)
	})
	b.Run("gemm/cols", func(b *testing.B) {
		cpu0 := processCPU()
		for b.Loop() {
			fam.gemmTile32(y, kp, t, 1, m, w, m, m, false)
		}
		report(b, 2*m*m*kp, cpu0)
	})
	b.Run("gen/p=16", func(b *testing.B) {
		cpu0 := processCPU()
		for b.Loop() {
			fam.genTile32(t, m, m, xr, xt, p, g, g, 0.1)
		}
		report(b, 2*m*m*p, cpu0)
	})
	b.Run("fma-peak", func(b *testing.B) {
		probe, err := fmaProbeOf(fam.isa, Float32)
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

// BenchmarkConsume measures every family's one-hot consumer (P·S) on one
// cache-resident 256×256 tile against k = 10 classes, in entries a
// second, for four patterns of the rows' and columns' classes: all one
// (a tile inside a cluster, rows sorted by class), cyclic (i mod k, as
// ssnmf bench gives), random, and runs of 8. The consumer adds each entry,
// widened, to a float64 accumulator in memory addressed by its class, so
// its speed depends on how often an addition waits for the one before it
// to the same accumulator.
func BenchmarkConsume(b *testing.B) {
	const m, k = 256, 10
	rng := rand.New(rand.NewPCG(7, 8))
	t := randomSlice(m*m, rng.Float32)
	accR, accC := make([]float64, k*m), make([]float64, k*m)
	for _, pat := range []struct {
		name  string
		class func(i int) int32
	}{
		{"same", func(int) int32 { return 0 }},
		{"cyclic", func(i int) int32 { return int32(i % k) }},
		{"random", func(int) int32 { return int32(rng.IntN(k)) }},
		{"runs8", func(i int) int32 { return int32(i / 8 % k) }},
	} {
		sr, sc := make([]int32, m), make([]int32, m)
		for i := range m {
			sr[i], sc[i] = pat.class(i), pat.class(i)
		}
		for _, fam := range denseKernelsHere(b) {
			b.Run(pat.name+"/"+fam.isa.String(), func(b *testing.B) {
				for b.Loop() {
					fam.consumeOneHot32(t, m, m, sr, sc, accR, accC, false, false)
				}
				b.ReportMetric(float64(m*m)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
			})
		}
	}
}

// TestGemm64MicroKernels checks the float64 P·W micro-kernels of every
// family bit for bit against their arithmetic, the portable consumer's
// (each product rounded, then added in order), in both modes (store and
// add) and both access patterns of the tile.
func TestGemm64MicroKernels(t *testing.T) {
	for _, fam := range denseKernelsHere(t) {
		t.Run(fam.isa.String(), func(t *testing.T) { testGemm64MicroKernels(t, fam) })
	}
}

func testGemm64MicroKernels(t *testing.T, fam *denseKernels) {
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
			fam.gemmTile64(set, tc.kp, a, rs, is, b, tc.m, tc.inner)
			// The add mode, on the block of the narrowest kernel at the top
			// left (8×8 for AVX-512, 4×4 for AVX2).
			add := make([]float64, len(want))
			for i := range add {
				add[i] = float64(i)
			}
			fam.gemm64[0](&add[0], tc.kp, &a[0], rs, is, &b[0], tc.kp, tc.inner, true)
			for i := range want {
				if math.Float64bits(set[i]) != math.Float64bits(want[i]) {
					t.Fatalf("y[%d][%d] = %v, reference %v", i/tc.kp, i%tc.kp, set[i], want[i])
				}
				r, c := i/tc.kp, i%tc.kp
				wantAdd := float64(i)
				if r < fam.rows && c < fam.cols64 {
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

// exp32Ref is exp32Slice's arithmetic on one value, in pure Go: the same
// operations in the same order (VRNDSCALE to even, fused multiply-adds,
// VSCALEF as an exact float64 product rounded once to float32).
func exp32Ref(v float32) float32 {
	c := func(i int) float32 { return expTab32[i][0] }
	// VMAXPS(lo, v) = lo > v ? lo : v, then VMINPS(x, 0) = x < 0 ? x : 0:
	// NaN and -0 come out +0.
	x := v
	if c(0) > x {
		x = c(0)
	}
	if !(x < 0) {
		x = 0
	}
	k := float32(math.RoundToEven(float64(float32(x * c(2)))))
	r := fma32(k, c(3), x)
	r = fma32(k, c(4), r)
	y := fma32(c(5), r, c(6))
	for i := 7; i <= 10; i++ {
		y = fma32(y, r, c(i))
	}
	y = fma32(y, float32(r*r), r)
	y = float32(y + c(11))
	return float32(float64(y) * math.Ldexp(1, int(k)))
}

// exp64Ref is exp64Slice's arithmetic on one value, in pure Go.
func exp64Ref(v float64) float64 {
	c := func(i int) float64 { return expTab64[i][0] }
	x := v
	if c(0) > x {
		x = c(0)
	}
	if !(x < 0) {
		x = 0
	}
	k := math.RoundToEven(float64(x * c(2)))
	r := math.FMA(k, c(3), x)
	r = math.FMA(k, c(4), r)
	y := math.FMA(c(5), r, c(6))
	for i := 7; i <= 15; i++ {
		y = math.FMA(y, r, c(i))
	}
	y = math.FMA(y, float64(r*r), r)
	y = float64(y + c(16))
	return math.Ldexp(y, int(k))
}

// TestExpBits checks every family's exps (exp32Slice and exp64Slice, and
// the AVX2 ones, whose y·2^k is built differently) bit for bit against
// their pure-Go arithmetic, exp32Ref and exp64Ref, on grids, random values
// and edges (subnormal results and the clamp's exact zeros included),
// lengths with and without an odd vector.
func TestExpBits(t *testing.T) {
	for _, fam := range denseKernelsHere(t) {
		t.Run(fam.isa.String(), func(t *testing.T) { testExpBits(t, fam) })
	}
}

func testExpBits(t *testing.T, fam *denseKernels) {
	rng := rand.New(rand.NewPCG(11, 12))
	// 40 values: 2.5 AVX-512 vectors, 5 AVX2 ones (the AVX2 exps' loop of
	// two vectors and its one-vector end); the exps leave a rest shorter
	// than a vector as it is.
	for _, m := range []int{40, 48, 96, 1 << 16} {
		x32 := expInputs[float32](m, -160, rng)
		y32 := slices.Clone(x32)
		fam.exp32(y32)
		done := m / fam.cols32 * fam.cols32
		for i, v := range x32 {
			want := v
			if i < done {
				want = exp32Ref(v)
			}
			if math.Float32bits(y32[i]) != math.Float32bits(want) {
				t.Fatalf("m=%d: exp32 value %d (%v) = %v (%#x), reference %v (%#x)", m, i, v, y32[i], math.Float32bits(y32[i]), want, math.Float32bits(want))
			}
		}
		x64 := expInputs[float64](m/2, -1200, rng)
		y64 := slices.Clone(x64)
		fam.exp64(y64)
		done = m / 2 / fam.cols64 * fam.cols64
		for i, v := range x64 {
			want := v
			if i < done {
				want = exp64Ref(v)
			}
			if math.Float64bits(y64[i]) != math.Float64bits(want) {
				t.Fatalf("m=%d: exp64 value %d (%v) = %v, reference %v", m/2, i, v, y64[i], want)
			}
		}
	}
	// A length that is not a multiple of the vector leaves the rest as it is.
	y := []float32{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -2}
	fam.exp32(y)
	if y[17] != -2 || y[16] != -1 || y[15] != exp32Ref(-1) {
		t.Errorf("exp32Slice on 18 values: rest %v, %v", y[16], y[17])
	}
}

// consumeRef is consumeOneHot32's arithmetic in pure Go: the additions
// into each accumulator in the assembly's order (rows in order for accC,
// columns in order for accR, 16×16 blocks row-major), the squares into
// 16 lanes by column, the lanes added by halves, then by a tree.
func consumeRef(t []float32, hp, wp int, sr, sc []int32, accR, accC []float64, diag, frob bool) float64 {
	var sq [16]float64
	for i0 := 0; i0 < hp; i0 += 16 {
		for j0 := 0; j0 < wp; j0 += 16 {
			for i := i0; i < i0+16; i++ {
				for j := j0; j < j0+16; j++ {
					v := float64(t[i*wp+j])
					if !diag {
						accC[int(sr[i])*wp+j] += v
					}
					if frob {
						sq[j-j0] = math.FMA(v, v, sq[j-j0])
					}
				}
			}
			for j := j0; j < j0+16; j++ {
				for i := i0; i < i0+16; i++ {
					accR[int(sc[j])*hp+i] += float64(t[i*wp+j])
				}
			}
		}
	}
	if !frob {
		return 0
	}
	var b [8]float64
	for l := range b {
		b[l] = sq[l] + sq[l+8]
	}
	return ((b[0] + b[1]) + (b[2] + b[3])) + ((b[4] + b[5]) + (b[6] + b[7]))
}

// TestConsumeOneHot32 checks every family's one-hot consumer bit for bit
// against consumeRef: P·S classes (k = 5, repeated classes in a block;
// runs of one class, which fill some blocks) and row sums (one class), on
// and off the diagonal, with and without squares.
func TestConsumeOneHot32(t *testing.T) {
	for _, fam := range denseKernelsHere(t) {
		t.Run(fam.isa.String(), func(t *testing.T) { testConsumeOneHot32(t, fam) })
	}
}

func testConsumeOneHot32(t *testing.T, fam *denseKernels) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, tc := range []struct {
		hp, wp, k  int
		diag, frob bool
		runs       bool // classes in runs of 1 to 40 rows, some blocks of one class
	}{
		{16, 16, 1, false, true, false}, {32, 48, 5, false, false, false}, {48, 32, 5, true, false, false},
		{64, 64, 1, true, true, false}, {16, 80, 3, false, true, false}, {80, 16, 7, false, false, false},
		{48, 48, 17, false, true, false}, {32, 16, 17, true, true, false},
		{96, 128, 5, false, true, true}, {128, 96, 3, false, false, true}, {96, 96, 4, true, false, true},
	} {
		tl := randomSlice(tc.hp*tc.wp, rng.Float32)
		cls, run, left := func() int32 { return int32(rng.IntN(tc.k)) }, int32(0), 0
		if tc.runs {
			cls = func() int32 {
				if left == 0 {
					run, left = int32(rng.IntN(tc.k)), 1+rng.IntN(40)
				}
				left--
				return run
			}
		}
		sr, sc := randomSlice(tc.hp, cls), randomSlice(tc.wp, cls)
		accR, accC := randomSlice(tc.k*tc.hp, rng.Float64), randomSlice(tc.k*tc.wp, rng.Float64)
		wantR, wantC := slices.Clone(accR), slices.Clone(accC)
		got := fam.consumeOneHot32(tl, tc.hp, tc.wp, sr, sc, accR, accC, tc.diag, tc.frob)
		want := consumeRef(tl, tc.hp, tc.wp, sr, sc, wantR, wantC, tc.diag, tc.frob)
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

// TestGen64 checks every family's genTile64 (the float64 exponent
// micro-kernels and exp) bit for bit against its arithmetic in pure Go: a
// chain of fused multiply-adds in feature order, one fused multiply-add
// with gc + gr, then exp64Ref; the shapes use every kernel of a family.
func TestGen64(t *testing.T) {
	for _, fam := range denseKernelsHere(t) {
		t.Run(fam.isa.String(), func(t *testing.T) { testGen64(t, fam) })
	}
}

func testGen64(t *testing.T, fam *denseKernels) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, tc := range []struct{ hp, wp, p int }{{8, 8, 1}, {16, 24, 3}, {24, 40, 16}, {8, 16, 0}, {32, 56, 37}, {16, 48, 17}} {
		x, xt := randomSlice(tc.hp*tc.p, rng.NormFloat64), randomSlice(tc.p*tc.wp, rng.NormFloat64)
		const gamma = 0.1
		g := func() float64 { return -gamma * 3 * rng.Float64() }
		gr, gc := randomSlice(tc.hp, g), randomSlice(tc.wp, g)
		xr := make([]float64, tc.hp*tc.p)
		if tc.p > 0 {
			packRows(xr, x, tc.p, 8)
		}
		got := make([]float64, tc.hp*tc.wp)
		fam.genTile64(got, tc.hp, tc.wp, xr, xt, tc.p, gr, gc, 2*gamma)
		for r := range tc.hp {
			for c := range tc.wp {
				var acc float64
				for q := range tc.p {
					acc = math.FMA(x[r*tc.p+q], xt[q*tc.wp+c], acc)
				}
				want := exp64Ref(math.FMA(acc, 2*gamma, gc[c]+gr[r]))
				if math.Float64bits(got[r*tc.wp+c]) != math.Float64bits(want) {
					t.Fatalf("%+v: t[%d][%d] = %v, reference %v", tc, r, c, got[r*tc.wp+c], want)
				}
			}
		}
	}
}

// TestAddF64sFamilies checks each family's assembly add (addFloat64s runs
// the fastest this CPU has; TestAddFloat64s checks it) against scalar
// additions, for lengths around their blocks of 4, 8, 16 and 32.
func TestAddF64sFamilies(t *testing.T) {
	for _, a := range []struct {
		name string
		ok   bool
		add  func(dst, src []float64)
	}{
		{"addF64s", cpuHas(ISAAVX512), func(dst, src []float64) { vectorAdd(addF64s, 8, dst, src) }},
		{"addF64sAVX2", cpuHas(ISAAVX2), func(dst, src []float64) { vectorAdd(addF64sAVX2, 4, dst, src) }},
	} {
		if !a.ok {
			t.Logf("%s: not on this CPU", a.name)
			continue
		}
		testAdd(t, a.name, a.add)
	}
}

// vectorAdd runs the assembly add fn on the longest prefix of dst that is
// a multiple of lanes, and adds the rest in Go.
func vectorAdd(fn func(dst, src *float64, n int), lanes int, dst, src []float64) {
	n := len(dst) / lanes * lanes
	if n > 0 {
		fn(&dst[0], &src[0], n)
	}
	for i := n; i < len(dst); i++ {
		dst[i] += src[i]
	}
}
