package solver

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSpectralOutOfCore solves three concentric rings, whose graph's
// eigengap makes Init auto take the spectral start, with no memory budget
// and with one whose scratch share holds neither the embedding's blocks
// nor its coarse graphs, which go to scratch files: the same start, which
// finds the rings, and W, the objective and the trace the same bits.
func TestSpectralOutOfCore(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	rows := make([][]float64, 18000)
	for i := range rows {
		r, a := float64(i%3+1), 2*math.Pi*rng.Float64()
		rows[i] = []float64{r*math.Cos(a) + 0.05*rng.NormFloat64(), r*math.Sin(a) + 0.05*rng.NormFloat64()}
	}
	var first *Result
	for _, mem := range []int64{0, 16 << 20} {
		if limit := cgroupMemoryLimit(); mem > 0 && limit > 0 && limit < mem {
			t.Skipf("the test's process is in a memory cgroup of %d bytes, below the budget tried", limit)
		}
		res, err := Solve(context.Background(), Input{Rows: rows}, Options{K: 3, Workers: 2, Memory: mem})
		if err != nil {
			t.Fatal(err)
		}
		sum := res.Summary
		if sum.Init != InitSpectral || sum.Spectral == nil {
			t.Fatalf("-mem %d: init %q (%s), want the spectral start", mem, sum.Init, sum.InitRule)
		}
		wrong := 0 // rows not in the cluster of their ring's first row
		for i := range res.N {
			if res.Cluster(i) != res.Cluster(i%3) {
				wrong++
			}
		}
		if wrong > res.N/100 {
			t.Errorf("memory %d: %d rows not in their ring's cluster", mem, wrong)
		}
		files := sum.Spectral.ScratchFileBytes
		t.Logf("memory %d: %s, %d rows off their ring's cluster, %d bytes of the embedding in scratch files", mem, sum.InitRule, wrong, files)
		if (mem > 0) != (files > 0) {
			t.Errorf("memory %d: %d bytes of the embedding in scratch files", mem, files)
		}
		if first == nil {
			first = res
			continue
		}
		same := slices.Equal(res.W, first.W) && res.Objective == first.Objective && len(res.Trace) == len(first.Trace)
		for i := 0; same && i < len(res.Trace); i++ {
			a, b := res.Trace[i], first.Trace[i]
			a.PassTime, a.Elapsed, b.PassTime, b.Elapsed = 0, 0, 0, 0
			same = a == b
		}
		if !same {
			t.Errorf("memory %d: W, the objective or the trace differ from the run without a budget", mem)
		}
	}
}
