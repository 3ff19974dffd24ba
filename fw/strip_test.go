package fw

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ssnmf/ssnmf/tile"
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
		rowsMulAdd(stripKernelsOf(""), acc, tl, tc.h, tc.wd, drow, tc.kp)
		rowsMulAddGo(accGo, tl, tc.h, tc.wd, drow, tc.kp)
		colsMulAdd(stripKernelsOf(""), y, tl, tc.h, tc.wd, dcol, tc.kp)
		colsMulAddGo(yGo, tl, tc.h, tc.wd, dcol, tc.kp)
		checkMulAdd(t, fmt.Sprintf("%+v rows", tc), [][]float64{acc, accGo}, acc0, tc.h, tc.wd, tc.kp,
			func(i, l int) float64 { return tl[i*tc.wd+l] }, drow)
		checkMulAdd(t, fmt.Sprintf("%+v cols", tc), [][]float64{y, yGo}, y0, tc.wd, tc.h, tc.kp,
			func(j, i int) float64 { return tl[i*tc.wd+j] }, dcol)
	}
}

// checkMulAdd checks each of gots, rows×kp, against base + A·B by a direct
// triple loop, with A the rows×inner matrix of the entries a(r, l) and B the
// inner×kp matrix b.
func checkMulAdd(t *testing.T, what string, gots [][]float64, base []float64, rows, inner, kp int, a func(r, l int) float64, b []float64) {
	t.Helper()
	for r := range rows {
		for c := range kp {
			want := base[r*kp+c]
			for l := range inner {
				want += a(r, l) * b[l*kp+c]
			}
			for _, got := range gots {
				if math.Abs(got[r*kp+c]-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("%s: (%d,%d) = %v, want %v", what, r, c, got[r*kp+c], want)
				}
			}
		}
	}
}

// familySource is a TileSource whose kernels are of a given family.
type familySource struct {
	TileSource
	family string
}

func (f familySource) VectorFamily() string { return f.family }

// TestStripsFollowFamily checks that the strips' dense products run the
// family of their source's kernels: the Go loops, and the sparse updates,
// for "go", the fastest family for a source that names none.
func TestStripsFollowFamily(t *testing.T) {
	src, err := tile.NewGaussian([]float64{0, 1, 2, 3, 4, 5}, 3, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src  TileSource
		want *stripKernels
	}{
		{src, stripKernelsOf("")},
		{familySource{src, "go"}, nil},
		{familySource{src, "auto"}, stripKernelsOf("")},
		{&tile.Engine{Source: src, ISA: tile.ISAGo}, nil},
	} {
		s, err := newStrips(tc.src, 4, SweepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s.kern != tc.want || s.dense != (tc.want != nil) {
			t.Errorf("%T: kernels %v dense %v, want %v", tc.src, s.kern, s.dense, tc.want)
		}
	}
}
