package graph

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/ssnmf/ssnmf/tile"
)

// points returns n random rows of p features with every fifth row a copy
// of the one before, so that ties at distance 0 occur.
func points(n, p int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 11))
	x := make([]float64, n*p)
	for i := range n {
		for q := range p {
			x[i*p+q] = math.Round(4*rng.NormFloat64()) / 4 // a coarse grid: ties in distance too
		}
		if i%5 == 4 {
			copy(x[i*p:(i+1)*p], x[(i-1)*p:i*p])
		}
	}
	return x
}

// bruteNeighbors returns the m neighbours of every row by sorting all
// distances: the row itself first, then by distance and index.
func bruteNeighbors(x []float64, n, p, m int) [][]int {
	out := make([][]int, n)
	for i := range n {
		js := make([]int, 0, n-1)
		for j := range n {
			if j != i {
				js = append(js, j)
			}
		}
		d := func(j int) float64 { return tile.SqDist(x[i*p:(i+1)*p], x[j*p:(j+1)*p]) }
		sort.SliceStable(js, func(a, b int) bool { return d(js[a]) < d(js[b]) || d(js[a]) == d(js[b]) && js[a] < js[b] })
		out[i] = append([]int{i}, js[:m-1]...)
	}
	return out
}

// dense returns P as a dense matrix.
func dense(m *CSR) []float64 {
	n := m.N()
	p := make([]float64, n*n)
	for i := range n {
		for e := m.RowPtr[i]; e < m.RowPtr[i+1]; e++ {
			p[i*n+int(m.Col[e])] = m.Val[e]
		}
	}
	return p
}

func TestKNNMatchesBruteForce(t *testing.T) {
	const n, p = 230, 3
	// many copies: 60 rows of one value, 9 of another, -0 next to 0, and
	// the rest as points gives them (every fifth a copy of the one before)
	many := points(n, p, 4)
	for i := range n {
		switch {
		case i%3 == 0 && i < 180:
			copy(many[i*p:(i+1)*p], []float64{0.5, -0.25, 1})
		case i%20 == 7:
			copy(many[i*p:(i+1)*p], []float64{2, 2, 2})
		case i%20 == 8:
			copy(many[i*p:(i+1)*p], []float64{math.Copysign(0, -1), 0, 0})
		case i%20 == 9:
			copy(many[i*p:(i+1)*p], []float64{0, 0, 0})
		}
	}
	for _, tc := range []struct {
		name    string
		x       []float64
		m       int
		weights Weights
		block   int
		workers int
	}{
		{name: "many copies", x: many, m: 10, block: 32, workers: 2},
		{name: "many copies, more neighbours than the small groups", x: many, m: 25, weights: SelfTuning, block: 50, workers: 3},
		{name: "connectivity", m: 10, block: 64, workers: 1},
		{name: "connectivity, other tiles and workers", m: 10, block: 17, workers: 3},
		{name: "self-tuning", m: 12, weights: SelfTuning, block: 50, workers: 2},
		{name: "one neighbour: the row itself", m: 1, block: 64, workers: 2},
		{name: "more neighbours than rows", m: 500, block: 100, workers: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := tc.x
			if x == nil {
				x = points(n, p, 1)
			}
			g, err := KNN(context.Background(), x, n, p, KNNOptions{Neighbors: tc.m, Weights: tc.weights, BlockSize: tc.block, Workers: tc.workers})
			if err != nil {
				t.Fatal(err)
			}
			m := min(tc.m, n)
			nb := bruteNeighbors(x, n, p, m)
			c := make([]float64, n*n) // the 0/1 indicator C
			for i, js := range nb {
				for _, j := range js {
					c[i*n+j] = 1
				}
			}
			sigma := make([]float64, n)
			for i := range n {
				sigma[i] = math.Sqrt(tile.SqDist(x[i*p:(i+1)*p], x[nb[i][min(SigmaNeighbor, m-1)]*p:][:p]))
			}
			var pos []float64
			for _, s := range sigma {
				if s > 0 {
					pos = append(pos, s)
				}
			}
			floor := 1.0
			if len(pos) > 0 {
				slices.Sort(pos)
				floor = 1e-3 * pos[len(pos)/2]
			}
			got := dense(g)
			for i := range n {
				for j := range n {
					w := 1.0
					if tc.weights == SelfTuning {
						d := tile.SqDist(x[i*p:(i+1)*p], x[j*p:(j+1)*p])
						w = math.Exp(-d / (max(sigma[i], floor) * max(sigma[j], floor)))
					}
					want := w * (c[i*n+j] + c[j*n+i]) / 2
					if math.Abs(got[i*n+j]-want) > 1e-15 {
						t.Fatalf("P[%d][%d] = %v, want %v", i, j, got[i*n+j], want)
					}
				}
				if got[i*n+i] != 1 {
					t.Fatalf("P[%d][%d] = %v, want 1", i, i, got[i*n+i])
				}
			}
		})
	}
}

// TestKNNSameBits checks that the graph has the same bits for any tile
// size and number of workers, and for both distance kernels.
func TestKNNSameBits(t *testing.T) {
	const n, p = 700, 5
	x := points(n, p, 2)
	var first *CSR
	for _, o := range []KNNOptions{{BlockSize: 256, Workers: 1}, {BlockSize: 33, Workers: 2}, {BlockSize: 700, Workers: 4}, {BlockSize: 1, Workers: 3}, {BlockSize: 100, Workers: 2, Kernel: tile.ISAGo}} {
		o.Weights = SelfTuning
		g, err := KNN(context.Background(), x, n, p, o)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = g
			continue
		}
		if !slices.Equal(g.RowPtr, first.RowPtr) || !slices.Equal(g.Col, first.Col) || !slices.Equal(g.Val, first.Val) {
			t.Errorf("block %d, %d workers, kernel %v: another graph", o.BlockSize, o.Workers, o.Kernel)
		}
	}
}

// TestKNNDuplicates checks that identical rows give a graph with finite
// weights: every σ is floored at 1.
func TestKNNDuplicates(t *testing.T) {
	const n, p = 40, 2
	x := make([]float64, n*p) // all rows equal
	g, err := KNN(context.Background(), x, n, p, KNNOptions{Neighbors: 5, Weights: SelfTuning})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range g.Val {
		if !(v > 0) || v > 1 {
			t.Fatalf("weight %v, want one in (0, 1]", v)
		}
	}
	// Ties go to the lower index: row 39's neighbours are itself and 0..3.
	if got := g.Col[g.RowPtr[39]:g.RowPtr[40]]; !slices.Equal(got, []int32{0, 1, 2, 3, 39}) {
		t.Errorf("row 39's neighbours %v, want 0 1 2 3 39", got)
	}
}

func TestKNNErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    []float64
		n, p int
		opt  KNNOptions
	}{
		{name: "no rows", n: 0, p: 1},
		{name: "short", x: make([]float64, 5), n: 3, p: 2},
		{name: "negative neighbours", x: make([]float64, 6), n: 3, p: 2, opt: KNNOptions{Neighbors: -1}},
		{name: "unknown weights", x: make([]float64, 6), n: 3, p: 2, opt: KNNOptions{Weights: 7}},
		{name: "negative workers", x: make([]float64, 6), n: 3, p: 2, opt: KNNOptions{Workers: -1}},
		{name: "negative descent candidates", x: make([]float64, 6), n: 3, p: 2, opt: KNNOptions{Method: Approximate, LeafRounds: 1, DescentReverse: -2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := KNN(context.Background(), tc.x, tc.n, tc.p, tc.opt); err == nil {
				t.Error("no error")
			}
		})
	}
	if _, err := ParseWeights("gaussian"); err == nil {
		t.Error("ParseWeights(gaussian): no error")
	}
	for _, w := range []Weights{Connectivity, SelfTuning} {
		if got, err := ParseWeights(w.String()); err != nil || got != w {
			t.Errorf("ParseWeights(%q) = %v, %v", w, got, err)
		}
	}
}

// BenchmarkKNN builds the 30-neighbour graph of 20,000 rows of 16 features
// (ten Gaussian clusters) on 2 goroutines, with each distance kernel, and
// reports distance entries (all n² counted, as for a tile pass) a second.
func BenchmarkKNN(b *testing.B) {
	const n, p = 20_000, 16
	x := benchPoints(n, p)
	for _, isa := range tile.SupportedISAs() {
		b.Run(isa.String(), func(b *testing.B) {
			for b.Loop() {
				if _, err := KNN(context.Background(), x, n, p, KNNOptions{Workers: 2, Kernel: isa}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// benchPoints returns n rows of p features in ten Gaussian clusters, the
// data of the kNN benchmarks.
func benchPoints(n, p int) []float64 {
	rng := rand.New(rand.NewPCG(3, 3))
	x := make([]float64, n*p)
	for i := range n {
		c := float64(rng.IntN(10))
		for q := range p {
			x[i*p+q] = c*float64(q%3) + rng.NormFloat64()
		}
	}
	return x
}

// BenchmarkKNNRows times part 0 of a search cut into parts (KNNRows) on
// the data of BenchmarkKNN, and reports the distance entries of its rows
// (rows × n) a second: a part searches every pair of its rows with all
// rows, where KNN offers each pair to both of its rows.
func BenchmarkKNNRows(b *testing.B) {
	const n, p = 20_000, 16
	x := benchPoints(n, p)
	for _, parts := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("part-of-%d", parts), func(b *testing.B) {
			rows := 0
			for b.Loop() {
				kp, err := KNNRows(context.Background(), x, n, p, KNNOptions{Workers: 2}, 0, parts)
				if err != nil {
					b.Fatal(err)
				}
				rows = len(kp.Rows)
			}
			b.ReportMetric(float64(rows)*float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// TestKNNProgress checks that the search reports every tile once, in order.
func TestKNNProgress(t *testing.T) {
	const n, p = 100, 2
	var got []int
	total := 0
	_, err := KNN(context.Background(), points(n, p, 6), n, p, KNNOptions{Neighbors: 4, BlockSize: 16, Workers: 3,
		Progress: func(pass string, done, tot int) {
			if pass != "kNN" {
				t.Errorf("pass %q", pass)
			}
			got, total = append(got, done), tot
		}})
	if err != nil {
		t.Fatal(err)
	}
	if nb := (n + 15) / 16; total != nb*(nb+1)/2 || len(got) != total {
		t.Fatalf("%d reports of %d tiles, want %d", len(got), total, nb*(nb+1)/2)
	}
	for i, d := range got {
		if d != i+1 {
			t.Fatalf("report %d says %d tiles done", i, d)
		}
	}
}

// TestKNNPartsSameBits checks that a build run as parts (KNNRows, JoinKNN)
// gives KNN's graph bit for bit, for any number of parts, with
// duplicated rows (settled before the search) among the data.
func TestKNNPartsSameBits(t *testing.T) {
	const n, p = 500, 4
	x := points(n, p, 5)
	copy(x[10*p:11*p], x[3*p:4*p]) // a row with two copies
	copy(x[11*p:12*p], x[3*p:4*p])
	for i := 100; i < 112; i++ { // and one with 11, more than M-1: closed
		copy(x[i*p:(i+1)*p], x[50*p:51*p])
	}
	ctx := context.Background()
	for _, o := range []KNNOptions{{Neighbors: 9, Weights: SelfTuning, BlockSize: 40, Workers: 2}, {Neighbors: 3, Weights: Connectivity, BlockSize: 64, Workers: 1}} {
		want, err := KNN(ctx, x, n, p, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, parts := range []int{1, 2, 3, 4, 7, 20} {
			var ps []*KNNPart
			for part := range parts {
				kp, err := KNNRows(ctx, x, n, p, o, part, parts)
				if err != nil {
					t.Fatal(err)
				}
				ps = append(ps, kp)
			}
			g, err := JoinKNN(x, n, p, o, ps)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(g.RowPtr, want.RowPtr) || !slices.Equal(g.Col, want.Col) || !slices.Equal(g.Val, want.Val) {
				t.Errorf("M=%d, %d parts: another graph than KNN's", o.Neighbors, parts)
			}
			// A part missing or given twice is refused (part 0 is empty
			// when there are more parts than blocks).
			if parts > 1 && len(ps[0].Rows) > 0 {
				if _, err := JoinKNN(x, n, p, o, ps[1:]); err == nil {
					t.Errorf("%d parts: joined without part 0", parts)
				}
				if _, err := JoinKNN(x, n, p, o, append(ps, ps[0])); err == nil {
					t.Errorf("%d parts: joined with part 0 twice", parts)
				}
			}
		}
	}
}

// TestByRow checks that byRow moves the list at each position q to row
// order[q], for permutations of one, of several cycles and of fixed points.
func TestByRow(t *testing.T) {
	for _, order := range [][]int32{{0}, {1, 0}, {2, 0, 1, 3}, {4, 3, 2, 1, 0, 5}, {1, 2, 3, 4, 5, 0}} {
		const m = 3
		n := len(order)
		b := newBest(n, m)
		for q := range n {
			b.cnt[q] = int32(q%m + 1)
			for e := range m {
				b.d[q*m+e], b.j[q*m+e] = float64(10*q+e), int32(100*q+e)
			}
		}
		b.byRow(order)
		for q, i := range order {
			for e := range m {
				if b.cnt[i] != int32(q%m+1) || b.d[int(i)*m+e] != float64(10*q+e) || b.j[int(i)*m+e] != int32(100*q+e) {
					t.Fatalf("order %v: row %d holds count %d, entry %d (%v, %d), want position %d's", order, i, b.cnt[i], e, b.d[int(i)*m+e], b.j[int(i)*m+e], q)
				}
			}
		}
	}
}
