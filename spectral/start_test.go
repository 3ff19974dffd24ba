package spectral

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/ssnmf/ssnmf/kmeans"
	"github.com/ssnmf/ssnmf/store"
)

// The spectral start of a graph with isolated rows: the normalised rows
// have unit length, or are 0 where the row has no edge; the memberships
// are rows of the simplex, without NaN; the blobs are found.
func TestStartMemberships(t *testing.T) {
	gc := graphCase{n: 300, c: 3, neighbors: 8, spread: 0.2, isolated: 4, seed: 11}
	g := gc.build(t)
	e, err := Embed(context.Background(), g, Options{K: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewStart(e, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !(st.Beta > 0) || math.IsInf(st.Beta, 0) {
		t.Fatalf("beta %v", st.Beta)
	}
	for i := range e.N {
		var sq float64
		for _, v := range st.Rows[i*3 : (i+1)*3] {
			sq += v * v
		}
		want := 1.0
		if i >= gc.n-gc.isolated {
			want = 0
		}
		if math.Abs(sq-want) > 1e-12 {
			t.Errorf("row %d: squared norm %v, want %v", i, sq, want)
		}
	}
	w := make([]float64, e.N*3)
	km, err := st.Memberships(context.Background(), w, 3, kmeans.Settings{Seed: 2, Starts: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range e.N {
		var sum float64
		for _, v := range w[i*3 : (i+1)*3] {
			if !(v >= 0) {
				t.Fatalf("row %d: membership %v", i, v)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("row %d sums to %v", i, sum)
		}
	}
	// The blobs are rows i%3: each is one cluster.
	for i := 3; i < gc.n-gc.isolated; i++ {
		if km.Labels[i] != km.Labels[i%3] {
			t.Fatalf("row %d in cluster %d, row %d in %d: the blobs are split", i, km.Labels[i], i%3, km.Labels[i%3])
		}
	}
}

// TestEigengap checks the relative eigengap (1 - λ_{k+1}) / (1 - λ_k).
func TestEigengap(t *testing.T) {
	for _, tc := range []struct {
		eig        []float64
		k          int
		want       float64
		components int
	}{
		{[]float64{1, 0.99, 0.9}, 2, 10, 0},
		{[]float64{1, 0.99, 0.9, 0.5}, 2, 10, 0},
		{[]float64{1, 1, 0.8}, 2, math.Inf(1), 0},
		{[]float64{1, 0.5}, 1, math.Inf(1), 0},
		{[]float64{1, 1 + 1e-12, 0.8}, 2, math.Inf(1), 0},
		{[]float64{1, 1, 1 + 1e-12}, 2, 1, 0},
		{[]float64{1, 1 - 1e-11, 1 - 2.2e-11}, 2, 1, 0}, // more than k components, apart by rounding
		{[]float64{1, 1 - 1e-11, 1 - 1e-3}, 2, math.Inf(1), 0},
		{[]float64{1, 1 - 1e-8, 1 - 1e-3}, 2, math.Inf(1), 0}, // a part joined by 1e-8 of its weight
		{[]float64{1, 1 - 1e-5, 1 - 1e-3}, 2, 100, 0},
		{[]float64{1, 0.99}, 2, math.NaN(), 0},
		{nil, 1, math.NaN(), 0},
		{[]float64{1, 1, 1 - 1e-4, 0.9}, 2, 1, 3}, // three components: their eigenvalues count as 1
		{[]float64{1, 1, 1 - 1e-4, 0.9}, 3, math.Inf(1), 3},
		{[]float64{1, 1 - 1e-6, 1 - 1e-3}, 2, 1e3, 1},
	} {
		got := Eigengap(tc.eig, tc.k, tc.components)
		if !(math.Abs(got-tc.want) <= 1e-6*math.Abs(tc.want) || got == tc.want || math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("Eigengap(%v, %d, %d) = %v, want %v", tc.eig, tc.k, tc.components, got, tc.want)
		}
	}
}

// TestBytes checks Bytes against the bytes Embed allocates, within a
// factor of 3 either way: the blocks dominate both, and Bytes is the most
// held at once, where the allocations add up what was freed too. With
// Options.Scratch, the heap allocations fall by Bytes' scratch part,
// within a factor of 3 either way: the blocks and coarse graphs are no
// longer on the heap.
func TestBytes(t *testing.T) {
	g := graphCase{n: 5000, c: 4, neighbors: 8, spread: 0.3, seed: 9}.build(t)
	allocated := func(opt Options) int64 {
		t.Helper()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := Embed(context.Background(), g, opt); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return int64(after.TotalAlloc - before.TotalAlloc)
	}
	for _, opt := range []Options{{K: 4, Seed: 3}, {K: 4, Seed: 3, Sweeps: 1}} {
		heap, scratch := Bytes(int64(g.N()), g.NNZ(), opt)
		all := allocated(opt)
		if est := heap + scratch; est > 3*all || all > 3*est {
			t.Errorf("%+v: Bytes %d, Embed allocated %d", opt, est, all)
		}
		opt.Scratch = store.NewScratchSpace(t.TempDir(), 0)
		moved := all - allocated(opt)
		if scratch > 3*moved || moved > 3*scratch {
			t.Errorf("%+v: Bytes' scratch part %d, the heap allocations fell by %d with Options.Scratch", opt, scratch, moved)
		}
		t.Logf("Sweeps %d: Bytes %d + %d, Embed allocated %d on the heap, %d with Options.Scratch", opt.Sweeps, heap, scratch, all, all-moved)
	}
}
