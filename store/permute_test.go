package store

import (
	"math/rand/v2"
	"testing"
)

func TestPermuteRows(t *testing.T) {
	for _, tc := range []struct{ n, k int }{{0, 3}, {1, 1}, {7, 3}, {1000, 4}} {
		rng := rand.New(rand.NewPCG(uint64(tc.n), 1))
		order := make([]int32, tc.n)
		for q := range order {
			order[q] = int32(q)
		}
		rng.Shuffle(tc.n, func(a, b int) { order[a], order[b] = order[b], order[a] })
		src := make([]float64, tc.n*tc.k)
		for q := range tc.n {
			for c := range tc.k {
				src[q*tc.k+c] = float64(order[q])*10 + float64(c)
			}
		}
		for _, chunk := range []int{permuteChunkBytes, 1, 8 * tc.k * 3} {
			dst := make([]float64, len(src))
			if err := permuteRows(dst, src, tc.k, order, chunk); err != nil {
				t.Fatal(err)
			}
			checkPermuted(t, dst, tc.n, tc.k)
		}
	}
	for _, order := range [][]int32{{0, 0, 1}, {0, 3, 1}, {-1, 0, 1}} {
		if err := PermuteRows(make([]float64, 3), make([]float64, 3), 1, order); err == nil {
			t.Errorf("order %v: no error", order)
		}
	}
}

// checkPermuted checks that row i of dst holds the values of input row i.
func checkPermuted(t *testing.T, dst []float64, n, k int) {
	t.Helper()
	for i := range n {
		for c := range k {
			if dst[i*k+c] != float64(i)*10+float64(c) {
				t.Fatalf("n=%d: dst[%d][%d] = %v, want row %d of the input", n, i, c, dst[i*k+c], i)
			}
		}
	}
}
