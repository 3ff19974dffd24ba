package spectral

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
)

// blobsGraph returns the symmetrised kNN graph (Gaussian weights) of n
// points drawn around c centers in the plane, seeded; isolated rows are
// left without an edge, and components are cut apart (no edge across
// components when apart).
type graphCase struct {
	n, c, neighbors int
	spread          float64 // the points' spread around their centers, the centers 1 apart
	apart           bool    // no edge between points of different centers
	isolated        int     // the last rows have no edge
	seed            uint64
}

func (gc graphCase) build(t testing.TB) *graph.CSR {
	t.Helper()
	rng := rand.New(rand.NewPCG(gc.seed, 1))
	n := gc.n
	xs, ys, lab := make([]float64, n), make([]float64, n), make([]int, n)
	for i := range n {
		lab[i] = i % gc.c
		a := 2 * math.Pi * float64(lab[i]) / float64(gc.c)
		xs[i] = math.Cos(a) + gc.spread*rng.NormFloat64()
		ys[i] = math.Sin(a) + gc.spread*rng.NormFloat64()
	}
	connected := n - gc.isolated
	type edge struct {
		j int32
		v float64
	}
	adj := make([]map[int32]float64, n)
	for i := range adj {
		adj[i] = map[int32]float64{}
	}
	for i := range connected {
		var near []edge
		for j := range connected {
			if gc.apart && lab[i] != lab[j] {
				continue
			}
			d := (xs[i]-xs[j])*(xs[i]-xs[j]) + (ys[i]-ys[j])*(ys[i]-ys[j])
			near = append(near, edge{int32(j), d})
		}
		slices.SortFunc(near, func(a, b edge) int {
			if a.v != b.v {
				if a.v < b.v {
					return -1
				}
				return 1
			}
			return int(a.j - b.j)
		})
		for _, e := range near[:min(gc.neighbors, len(near))] {
			v := math.Exp(-e.v / (gc.spread * gc.spread))
			adj[i][e.j], adj[e.j][int32(i)] = v, v
		}
	}
	rowPtr := make([]int64, n+1)
	var col []int32
	var val []float64
	for i := range n {
		cols := make([]int32, 0, len(adj[i]))
		for j := range adj[i] {
			cols = append(cols, j)
		}
		slices.Sort(cols)
		for _, j := range cols {
			col, val = append(col, j), append(val, adj[i][j])
		}
		rowPtr[i+1] = int64(len(col))
	}
	g, err := graph.NewCSR(rowPtr, col, val)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// denseNormalized returns D^-½ P D^-½ of g as a dense matrix.
func denseNormalized(g *graph.CSR) *mat.SymDense {
	n := g.N()
	deg := make([]float64, n)
	for i := range n {
		for e := g.RowPtr[i]; e < g.RowPtr[i+1]; e++ {
			deg[i] += g.Val[e]
		}
	}
	a := mat.NewSymDense(n, nil)
	for i := range n {
		for e := g.RowPtr[i]; e < g.RowPtr[i+1]; e++ {
			j := int(g.Col[e])
			if j >= i && deg[i] > 0 && deg[j] > 0 {
				a.SetSym(i, j, g.Val[e]/math.Sqrt(deg[i]*deg[j]))
			}
		}
	}
	return a
}

func TestEmbedAgainstDense(t *testing.T) {
	for _, tc := range []struct {
		name string
		gc   graphCase
		k    int
		ones int // eigenvalues equal to 1
	}{
		{"three blobs", graphCase{n: 300, c: 3, neighbors: 10, spread: 0.3, seed: 1}, 3, 1},
		{"five overlapping blobs", graphCase{n: 400, c: 5, neighbors: 12, spread: 0.6, seed: 2}, 5, 1},
		{"three components", graphCase{n: 240, c: 3, neighbors: 8, spread: 0.2, apart: true, seed: 3}, 3, 3},
		{"more components than the block", graphCase{n: 360, c: 12, neighbors: 6, spread: 0.02, apart: true, seed: 6}, 3, 4},
		{"isolated rows", graphCase{n: 200, c: 2, neighbors: 8, spread: 0.3, isolated: 5, seed: 4}, 2, 1},
		{"one cluster", graphCase{n: 150, c: 1, neighbors: 6, spread: 1, seed: 5}, 1, 1},
	} {
		g := tc.gc.build(t)
		for _, degree := range []int{1, DefaultDegree} {
			for _, st := range starts {
				t.Run(fmt.Sprintf("%s/degree %d/%s", tc.name, degree, st.name), func(t *testing.T) {
					opt := st.opt
					opt.K, opt.Degree = tc.k, degree
					testEmbedDense(t, g, opt, tc.ones, tc.gc.isolated)
				})
			}
		}
	}
}

// starts are the starting blocks the tests run: the random block, the
// coarse graph's embedding with the graph's dense one below it, and with
// two coarse graphs or more below it.
var starts = []struct {
	name string
	opt  Options
}{
	{"random", Options{CellRows: -1}},
	{"coarse", Options{CellRows: DefaultCellRows}},
	{"levels", Options{CellRows: 4, denseRows: 30}},
}

// testEmbedDense checks the embedding of g with the options opt against
// the dense eigensolver: the graph has ones eigenvalues 1 and its last
// rows isolated have no edge.
func testEmbedDense(t *testing.T, g *graph.CSR, opt Options, ones, isolated int) {
	opt.Seed, opt.Workers = 7, 2
	e, err := Embed(context.Background(), g, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Converged {
		t.Fatalf("not converged after %d iterations: residuals %v", e.Iterations, e.Residuals)
	}
	a := denseNormalized(g)
	var es mat.EigenSym
	if !es.Factorize(a, false) {
		t.Fatal("dense eigensolver failed")
	}
	want := es.Values(nil)
	slices.Reverse(want)
	n := g.N()
	for j, v := range e.Values {
		if math.Abs(v-want[j]) > 1e-9 {
			t.Errorf("eigenvalue %d: %.12f, dense %.12f", j, v, want[j])
		}
		if j < ones && math.Abs(v-1) > 1e-9 {
			t.Errorf("eigenvalue %d: %.12f, want 1", j, v)
		}
	}
	// The residuals, recomputed with the dense matrix.
	for j := range e.K {
		x := mat.NewVecDense(n, nil)
		for i := range n {
			x.SetVec(i, e.Vectors[i*e.K+j])
		}
		var ax mat.VecDense
		ax.MulVec(a, x)
		ax.AddScaledVec(&ax, -e.Values[j], x)
		if r := ax.Norm(2) / x.Norm(2); r > 1e-6 || math.IsNaN(r) {
			t.Errorf("eigenvector %d: relative residual %.3g, reported %.3g", j, r, e.Residuals[j])
		}
		if math.Abs(x.Norm(2)-1) > 1e-9 {
			t.Errorf("eigenvector %d: norm %v", j, x.Norm(2))
		}
	}
	for i := n - isolated; i < n; i++ {
		for j := range e.K {
			if v := e.Vectors[i*e.K+j]; v != 0 {
				t.Errorf("isolated row %d: embedding %v, want 0", i, v)
			}
		}
	}
	if e.Isolated != isolated {
		t.Errorf("isolated rows %d, want %d", e.Isolated, isolated)
	}
	// The components: the eigenvalues within 10⁻⁹ of 1 of the dense
	// solver (each case's components are far apart or joined).
	dense1 := 0
	for _, v := range want {
		if 1-v < 1e-9 {
			dense1++
		}
	}
	if e.Components != dense1 {
		t.Errorf("%d components, the dense solver has %d eigenvalues 1", e.Components, dense1)
	}
	if wantLevels := opt.CellRows == 4 && g.N()-isolated > 4*30; wantLevels != (e.Levels >= 2) {
		t.Errorf("%d coarse levels below the graph of %d rows", e.Levels, g.N())
	}
	t.Logf("%d iterations, %d passes, %d levels, values %.6f, residuals %.2g", e.Iterations, e.Passes, e.Levels, e.Values, e.Residuals)
}

// TestEmbedWorkers checks the same bits for 1, 2 and 5 workers on a graph
// of several chunks of rows, and on one whose first coarse graph has
// several chunks of cells; and with the blocks and coarse graphs in
// scratch files, or partly in anonymous memory, rather than the heap.
func TestEmbedWorkers(t *testing.T) {
	small := graphCase{n: 5000, c: 4, neighbors: 8, spread: 0.3, seed: 9}.build(t)
	large := graphCase{n: 12000, c: 4, neighbors: 8, spread: 0.3, seed: 9}.build(t)
	for _, tc := range []struct {
		g   *graph.CSR
		opt Options
	}{
		{small, Options{K: 4, Seed: 3}},
		{small, Options{K: 4, Seed: 3, Sweeps: 1}},
		{small, Options{K: 4, Seed: 3, CellRows: DefaultCellRows}},
		{large, Options{K: 4, Seed: 3, Sweeps: 1, CellRows: 2}},
	} {
		g, opt := tc.g, tc.opt
		var first *Embedding
		for _, w := range []int{1, 2, 5} {
			g.Workers, opt.Workers = w, w
			e, err := Embed(context.Background(), g, opt)
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = e
				t.Logf("%+v: %d iterations, %d passes, %d levels, values %.6f, residuals %.2g", opt, e.Iterations, e.Passes, e.Levels, e.Values, e.Residuals)
				continue
			}
			if !slices.Equal(e.Vectors, first.Vectors) || !slices.Equal(e.Values, first.Values) || e.Passes != first.Passes {
				t.Errorf("%+v, %d workers: not the bits of 1 worker", opt, w)
			}
		}
		// Its blocks and coarse graphs in files, or some in anonymous
		// memory and the rest in files: the same bits, and every byte of
		// the space given back.
		for _, memory := range []int64{0, int64(g.N()) * 9 * 8 * 2} {
			space := store.NewScratchSpace(t.TempDir(), memory)
			opt.Scratch, opt.Workers, g.Workers = space, 2, 2
			e, err := Embed(context.Background(), g, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(e.Vectors, first.Vectors) || !slices.Equal(e.Values, first.Values) {
				t.Errorf("%+v, scratch of %d bytes of memory: not the bits of the heap", opt, memory)
			}
			if space.Left() != memory {
				t.Errorf("%+v: %d bytes of the scratch's memory left after the embedding, want all %d", opt, space.Left(), memory)
			}
		}
	}
}

func TestEmbedErrors(t *testing.T) {
	g := graphCase{n: 20, c: 2, neighbors: 4, spread: 0.3, seed: 1}.build(t)
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"K 0", Options{K: 0}},
		{"K above n", Options{K: 21}},
		{"block below K+1", Options{K: 3, Block: 3}},
		{"negative tolerance", Options{K: 2, Tol: -1}},
		{"negative sweeps", Options{K: 2, Sweeps: -1}},
		{"cells of one row", Options{K: 2, CellRows: 1}},
		{"negative degree", Options{K: 2, Degree: -2}},
	} {
		if _, err := Embed(context.Background(), g, tc.opt); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	empty, err := graph.NewCSR(make([]int64, 4), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Embed(context.Background(), empty, Options{K: 1}); err == nil {
		t.Error("a graph without edges: no error")
	}
}
