package store

import (
	"math/rand/v2"
	"os"
	"strings"
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
		// In memory (run 0: no directory); one run; a run a row (a file
		// each: small n only); runs of three rows, of 97 (scans of src at
		// n = 1000) and of 300 (scans, the last run short).
		for _, run := range []int{0, permuteRunBytes, 1, 8 * tc.k * 3, 8 * tc.k * 97, 8 * tc.k * 300} {
			if run == 1 && tc.n > 10 {
				continue
			}
			dir := t.TempDir()
			if run == 0 {
				dir = ""
			}
			dst := make([]float64, len(src))
			if err := permuteRows(dst, src, tc.k, order, dir, run); err != nil {
				t.Fatal(err)
			}
			checkPermuted(t, dst, tc.n, tc.k)
			if left, _ := os.ReadDir(dir); dir != "" && len(left) > 0 {
				t.Errorf("n=%d, runs of %d bytes: %d files left in the directory", tc.n, run, len(left))
			}
		}
	}
	for _, order := range [][]int32{{0, 0, 1}, {0, 3, 1}, {-1, 0, 1}} {
		for _, dir := range []string{t.TempDir(), ""} {
			if err := PermuteRows(make([]float64, 3), make([]float64, 3), 1, order, dir, 0); err == nil {
				t.Errorf("order %v, directory %q: no error", order, dir)
			}
		}
	}
}

// TestPermuteRun checks the runs' bytes within PermuteRows' memory: the
// memory, but at least 16 MiB and at most 256 MiB.
func TestPermuteRun(t *testing.T) {
	for _, tc := range []struct {
		memory int64
		want   int
	}{{-1, 16 << 20}, {0, 16 << 20}, {1 << 20, 16 << 20}, {105e6, 105e6}, {256 << 20, 256 << 20}, {1 << 40, 256 << 20}} {
		if got := permuteRun(tc.memory); got != tc.want {
			t.Errorf("permuteRun(%d) = %d, want %d", tc.memory, got, tc.want)
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

// TestPermuteRowsDirError checks that a directory where the runs' files
// cannot be made is an error naming it, when dst takes more than one run.
func TestPermuteRowsDirError(t *testing.T) {
	const n, k = 10, 2
	order := []int32{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}
	dir := t.TempDir() + "/missing"
	err := permuteRows(make([]float64, n*k), make([]float64, n*k), k, order, dir, 8*k)
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("runs in a missing directory: error %v, want one naming it", err)
	}
}
