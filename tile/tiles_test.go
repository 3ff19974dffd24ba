package tile

import (
	"context"
	"math"
	"sync"
	"testing"
)

// TestEngineTile checks Engine.Tile, in both precisions and with the
// portable and (where built) vectorized kernel, against the materialized P,
// for diagonal, off-diagonal, ragged and repeated tiles from several
// goroutines; that diagonal tiles are exactly symmetric with a unit
// diagonal; and that the tiles add up to the row sums of the Engine's own
// stats pass, so a consumer of Tile sees the passes' P.
func TestEngineTile(t *testing.T) {
	const n, p, gamma = 203, 5, 0.3
	x := randomFeatures(n, p, 11)
	ref := denseP(x, n, p, gamma)
	rects := []struct{ r0, r1, c0, c1 int }{
		{r0: 0, r1: 64, c0: 0, c1: 64},      // diagonal
		{r0: 64, r1: 97, c0: 64, c1: 97},    // diagonal, ragged
		{r0: 0, r1: 64, c0: 64, c1: 203},    // wide strip tile
		{r0: 200, r1: 203, c0: 1, c1: 2},    // tiny
		{r0: 10, r1: 203, c0: 190, c1: 203}, // tall
		{r0: 5, r1: 5, c0: 0, c1: 10},       // empty
	}
	for _, prec := range []Precision{Float64, Float32} {
		for _, isa := range []ISA{ISAGo, ISAAuto} {
			src, err := NewGaussianPrecision(x, n, p, gamma, prec)
			if err != nil {
				t.Fatal(err)
			}
			e := &Engine{Source: src, BlockSize: 64, Workers: 2, ISA: isa}
			tol := 1e-12
			if prec == Float32 {
				// Single entries, unlike the sums of the passes, keep the
				// whole rounding of the float32 norms identity.
				tol = 5e-6
			}
			t.Run(e.Kernel(), func(t *testing.T) {
				var wg sync.WaitGroup
				errs := make([]error, 4*len(rects))
				got := make([][]float64, len(errs))
				for g := range errs {
					wg.Go(func() {
						rc := rects[g%len(rects)]
						got[g] = make([]float64, (rc.r1-rc.r0)*(rc.c1-rc.c0))
						errs[g] = e.Tile(got[g], rc.r0, rc.r1, rc.c0, rc.c1)
					})
				}
				wg.Wait()
				for g, err := range errs {
					rc := rects[g%len(rects)]
					if err != nil {
						t.Fatalf("%+v: %v", rc, err)
					}
					w := rc.c1 - rc.c0
					want := make([]float64, 0, len(got[g]))
					for i := rc.r0; i < rc.r1; i++ {
						for j := rc.c0; j < rc.c1; j++ {
							want = append(want, ref.At(i, j))
						}
					}
					if d := maxRelDiff(got[g], want); d > tol {
						t.Errorf("%+v: differs from the dense P by %.3g", rc, d)
					}
					if rc.r0 == rc.c0 && rc.r1 == rc.c1 {
						for i := range w {
							if got[g][i*w+i] != 1 {
								t.Errorf("%+v: diagonal entry %d is %v", rc, i, got[g][i*w+i])
							}
							for j := range i {
								if got[g][i*w+j] != got[g][j*w+i] {
									t.Fatalf("%+v: entries (%d,%d) and (%d,%d) differ", rc, i, j, j, i)
								}
							}
						}
					}
				}
				// The tiles of the grid against the stats pass's row sums.
				sums := make([]float64, n)
				if _, err := e.Stats(context.Background(), sums); err != nil {
					t.Fatal(err)
				}
				buf := make([]float64, 64*64)
				for r0 := 0; r0 < n; r0 += 64 {
					r1 := min(n, r0+64)
					var row [64]float64
					for c0 := 0; c0 < n; c0 += 64 {
						c1 := min(n, c0+64)
						if err := e.Tile(buf, r0, r1, c0, c1); err != nil {
							t.Fatal(err)
						}
						for i := range r1 - r0 {
							for _, v := range buf[i*(c1-c0) : (i+1)*(c1-c0)] {
								row[i] += v
							}
						}
					}
					for i := range r1 - r0 {
						if d := math.Abs(row[i]-sums[r0+i]) / sums[r0+i]; d > 1e-13 {
							t.Errorf("row %d: tiles sum to %v, the stats pass says %v", r0+i, row[i], sums[r0+i])
						}
					}
				}
			})
		}
	}
}

func TestEngineTileErrors(t *testing.T) {
	src, err := NewGaussian(randomFeatures(10, 2, 1), 10, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{Source: src}
	for _, tc := range []struct {
		name           string
		room           int
		r0, r1, c0, c1 int
	}{
		{name: "past n", room: 100, r0: 0, r1: 11, c0: 0, c1: 10},
		{name: "negative", room: 100, r0: -1, r1: 2, c0: 0, c1: 2},
		{name: "reversed", room: 100, r0: 4, r1: 2, c0: 0, c1: 2},
		{name: "small dst", room: 3, r0: 0, r1: 2, c0: 0, c1: 2},
	} {
		if err := e.Tile(make([]float64, tc.room), tc.r0, tc.r1, tc.c0, tc.c1); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
