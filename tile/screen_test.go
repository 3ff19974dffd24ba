package tile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// fma32 returns a·b + c rounded once to float32, the arithmetic of a
// float32 fused multiply-add: the product is exact in float64, the sum is
// hi + lo exactly (two-sum), and hi rounds to the float32 of hi + lo
// unless it lies exactly halfway between two float32s, where lo decides.
func fma32(a, b, c float32) float32 {
	s, cc := float64(a)*float64(b), float64(c)
	hi := s + cc
	bb := hi - s
	lo := (s - (hi - bb)) + (cc - bb)
	f := float32(hi)
	if lo == 0 || math.IsInf(hi, 0) {
		return f
	}
	// The neighbour of f on the side of hi, and the midpoint between them.
	g := math.Nextafter32(f, float32(math.Copysign(math.Inf(1), hi-float64(f))))
	if hi == float64(f) {
		g = math.Nextafter32(f, float32(math.Copysign(math.Inf(1), lo)))
	}
	if mid := (float64(f) + float64(g)) / 2; hi == mid {
		if (lo > 0) == (float64(g) > float64(f)) {
			return g
		}
	}
	return f
}

// screenRef is the tile every screen kernel promises (screenKernel.dot):
// t[r][c] = fma(tg, chain of fused x_r·x_c in feature order, gc[c] + gr[r]).
func screenRef(t []float32, hp, wp, stride int, xr, xt []float32, p int, gr, gc []float32, tg float32) {
	for r := range hp {
		g, rr := r/8, r%8
		for c := range wp {
			var acc float32
			for q := range p {
				acc = fma32(xr[g*8*p+q*8+rr], xt[q*stride+c], acc)
			}
			t[r*stride+c] = fma32(acc, tg, gc[c]+gr[r])
		}
	}
}

// TestFMA32 checks the reference's fused multiply-add against cases whose
// single rounding differs from rounding a·b + c twice.
func TestFMA32(t *testing.T) {
	one, eps := float32(1), float32(0x1p-23)
	for _, tc := range []struct{ a, b, c, want float32 }{
		{1, 1, 1, 2},
		{one + eps, one - eps, -1, -eps * eps},                 // the product's low bits survive
		{one + eps, one + eps, 0, one + 2*eps},                 // 1 + 2ε + ε² rounds down
		{3, 1.0 / 3, -1, fma32Exact(3, 1.0/3, -1)},             // cancellation
		{0x1p-100, 0x1p-100, 1, 1},                             // far below the sum
		{1 + 0x1p-23, 0x1p-24, 1, math.Nextafter32(1, 2)},      // past the midpoint by a hair
		{1, 0x1p-24, 1, 1},                                     // exactly halfway: to even
		{3 * 0x1p-25, 1, 1, math.Nextafter32(1, 2)},            // above halfway
		{-(1 + 0x1p-23), 0x1p-24, -1, -math.Nextafter32(1, 2)}, // negative, past the midpoint
	} {
		if got := fma32(tc.a, tc.b, tc.c); got != tc.want {
			t.Errorf("fma32(%g, %g, %g) = %g, want %g", tc.a, tc.b, tc.c, got, tc.want)
		}
	}
}

// fma32Exact is fma32 by exact rational arithmetic on the few values
// where it is easy: a·b + c with the product exact in float64 and the sum
// exact too.
func fma32Exact(a, b, c float32) float32 { return float32(float64(a)*float64(b) + float64(c)) }

// TestScreenKernels checks every screen kernel this CPU runs, bit for bit,
// against the reference tile and the portable mask: the dot products of
// whole tiles (Within's), and the masks of every group of 8 rows from
// every first word (Near's), for feature counts from 1 to 37, several tile
// shapes and values on the thresholds.
func TestScreenKernels(t *testing.T) {
	ran := 0
	for _, isa := range SupportedISAs() {
		k := screenKernelOf(isa)
		if k == nil {
			continue
		}
		ran++
		rng := rand.New(rand.NewPCG(5, uint64(isa)))
		for _, tc := range []struct{ n, p, b int }{{9, 1, 8}, {40, 3, 40}, {130, 16, 70}, {64, 37, 64}, {200, 5, 256}} {
			t.Run(fmt.Sprintf("%s/n=%d/p=%d/b=%d", isa, tc.n, tc.p, tc.b), func(t *testing.T) {
				x := make([]float64, tc.n*tc.p)
				for i := range x {
					x[i] = rng.NormFloat64() * 3
				}
				ps, err := NewPairs(x, tc.n, tc.p, tc.b, isa)
				if err != nil {
					t.Fatal(err)
				}
				v := ps.vector()
				if v == nil || v.k.isa != isa {
					t.Fatalf("no %s screen", isa)
				}
				s := v.newScratch().(*pairsScratch)
				bp, p := v.bp, v.p
				nb := ps.Blocks()
				want := make([]float32, len(s.t))
				for I := range nb {
					for J := I; J < nb; J++ {
						r0, r1 := ps.Rows(I)
						c0, c1 := ps.Rows(J)
						hp, wp := roundUp(r1-r0, 8), roundUp(c1-c0, 64)
						xr, xt := v.xr[I*bp*p:(I+1)*bp*p], v.xt[J*bp*p:(J+1)*bp*p]
						nr, nc := v.n32[I*bp:(I+1)*bp], v.n32[J*bp:(J+1)*bp]
						clear(s.t)
						v.dotTile(s.t, hp, bp, wp, xr, xt, nr, nc)
						screenRef(want, hp, wp, bp, xr, xt, p, nr, nc, -2)
						for r := range hp {
							for c := range wp {
								if g, w := s.t[r*bp+c], want[r*bp+c]; math.Float32bits(g) != math.Float32bits(w) {
									t.Fatalf("tile %d,%d [%d][%d] = %v, want %v", I, J, r, c, g, w)
								}
							}
						}
						// Masks: thresholds at, below and above tile values,
						// a group of 8 rows from each first word at once.
						for j := range wp {
							s.cth[j] = pickTh(rng, want[rng.IntN(hp)*bp+j])
						}
						for r := range hp {
							s.rth[r] = pickTh(rng, want[r*bp+rng.IntN(wp)])
						}
						for i0 := 0; i0 < hp; i0 += 8 {
							for first := 0; first < wp; first += 64 {
								words := (wp - first) / 64
								got := make([]uint64, 8*words)
								v.screenRows(s, got, xr, xt, nr, nc, i0, first, words)
								for r := range 8 {
									for e := range words {
										c := first + 64*e
										if g, w := got[r*words+e], maskGo(&want[(i0+r)*bp+c], &s.cth[c], s.rth[i0+r]); g != w {
											t.Fatalf("tile %d,%d: mask of row %d at %d: %064b, want %064b", I, J, i0+r, c, g, w)
										}
									}
								}
							}
						}
					}
				}
			})
		}
	}
	if ran == 0 {
		t.Skipf("no vector screen on this CPU (%s)", CPUFeatures())
	}
}

// pickTh returns a threshold on tile value v, just below it, or a random
// one.
func pickTh(rng *rand.Rand, v float32) float32 {
	switch rng.IntN(3) {
	case 0:
		return v
	case 1:
		return math.Nextafter32(v, -1e30)
	}
	return float32(rng.NormFloat64() * 30)
}

// maskGo is one word of screenKernel.mask in Go: the reference of the
// kernels' masks.
func maskGo(t, cth *float32, rth float32) uint64 {
	ts, cs := unsafe.Slice(t, 64), unsafe.Slice(cth, 64)
	var m uint64
	for j, tv := range ts {
		if tv <= rth || tv <= cs[j] {
			m |= 1 << j
		}
	}
	return m
}
