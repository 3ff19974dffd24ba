package fw

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestStripProducts checks the strip products of this build (vector
// instructions where built) against the portable loops and a direct
// triple loop, on ragged shapes and every packed width.
func TestStripProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ h, wd, kp int }{
		{h: 1, wd: 1, kp: 8}, {h: 4, wd: 4, kp: 8}, {h: 7, wd: 13, kp: 8},
		{h: 64, wd: 256, kp: 16}, {h: 37, wd: 5, kp: 16}, {h: 9, wd: 11, kp: 24},
		{h: 0, wd: 5, kp: 8}, {h: 5, wd: 0, kp: 16},
	} {
		rnd := func(n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = rng.NormFloat64()
			}
			return v
		}
		tl, drow, dcol := rnd(tc.h*tc.wd), rnd(tc.wd*tc.kp), rnd(tc.h*tc.kp)
		acc0, y0 := rnd(tc.h*tc.kp), rnd(tc.wd*tc.kp)
		acc, accGo, y, yGo := slices.Clone(acc0), slices.Clone(acc0), slices.Clone(y0), slices.Clone(y0)
		rowsMulAdd(acc, tl, tc.h, tc.wd, drow, tc.kp)
		rowsMulAddGo(accGo, tl, tc.h, tc.wd, drow, tc.kp)
		colsMulAdd(y, tl, tc.h, tc.wd, dcol, tc.kp)
		colsMulAddGo(yGo, tl, tc.h, tc.wd, dcol, tc.kp)
		for i := range tc.h {
			for c := range tc.kp {
				want := acc0[i*tc.kp+c]
				for l := range tc.wd {
					want += tl[i*tc.wd+l] * drow[l*tc.kp+c]
				}
				for _, got := range []float64{acc[i*tc.kp+c], accGo[i*tc.kp+c]} {
					if math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
						t.Fatalf("%+v rows: (%d,%d) = %v, want %v", tc, i, c, got, want)
					}
				}
			}
		}
		for j := range tc.wd {
			for c := range tc.kp {
				want := y0[j*tc.kp+c]
				for i := range tc.h {
					want += tl[i*tc.wd+j] * dcol[i*tc.kp+c]
				}
				for _, got := range []float64{y[j*tc.kp+c], yGo[j*tc.kp+c]} {
					if math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
						t.Fatalf("%+v cols: (%d,%d) = %v, want %v", tc, j, c, got, want)
					}
				}
			}
		}
	}
}
