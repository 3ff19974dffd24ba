package spectral

import (
	"context"
	"math"
	"testing"

	"github.com/ssnmf/ssnmf/kmeans"
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
