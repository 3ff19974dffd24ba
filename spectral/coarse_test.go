package spectral

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/kmeans"
	"github.com/ssnmf/ssnmf/score"
	"github.com/ssnmf/ssnmf/store"
)

// TestCoarseGraph checks the cells and the coarse graph against their
// definitions: every row with an edge is in one cell and a row without
// one in none; a cell is connected and within one component of the graph;
// the coarse graph's entry (a, q) is the sum of P over the rows of cells a
// and q, and it is symmetric to the bit, and the same bits in a scratch
// file as on the heap.
func TestCoarseGraph(t *testing.T) {
	for _, gc := range []graphCase{
		{n: 600, c: 3, neighbors: 8, spread: 0.3, seed: 1},
		{n: 480, c: 6, neighbors: 6, spread: 0.05, apart: true, isolated: 7, seed: 2},
	} {
		g := gc.build(t)
		op, _, _, err := newOperator(context.Background(), g, 2)
		if err != nil {
			t.Fatal(err)
		}
		c, err := grow(context.Background(), op, 40, 5, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := g.N()
		for i, a := range c.of {
			if isolated := i >= n-gc.isolated; isolated != (a < 0) || int(a) >= c.m {
				t.Fatalf("row %d (isolated %v) in cell %d of %d", i, isolated, a, c.m)
			}
			if gc.apart && a >= 0 {
				// With apart, row i's component is its blob i % c.
				if first := firstRow(c.of, a); first%gc.c != i%gc.c {
					t.Errorf("cell %d spans the components of rows %d and %d", a, first, i)
				}
			}
		}
		checkConnected(t, g, c)
		pc, _, err := coarseGraph(context.Background(), op, c, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		// In a file, its rows asked for before they are gathered, the same
		// bits.
		pf, sc, err := coarseGraph(context.Background(), op, c, store.NewScratchSpace(t.TempDir(), 0), true)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Where() != "file" || !slices.Equal(pf.RowPtr, pc.RowPtr) || !slices.Equal(pf.Col, pc.Col) || !slices.Equal(pf.Val, pc.Val) {
			t.Errorf("the coarse graph in scratch (%s) differs from the one on the heap", sc.Where())
		}
		if err := sc.Release(); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, c.m*c.m)
		for i := range n {
			for e := g.RowPtr[i]; e < g.RowPtr[i+1]; e++ {
				if a, q := c.of[i], c.of[g.Col[e]]; a >= 0 && q >= 0 {
					want[int(a)*c.m+int(q)] += g.Val[e]
				}
			}
		}
		got := make([]float64, c.m*c.m)
		for a := range c.m {
			for e := pc.RowPtr[a]; e < pc.RowPtr[a+1]; e++ {
				got[a*c.m+int(pc.Col[e])] = pc.Val[e]
			}
		}
		checkCoarseSums(t, c.m, want, got)
	}
}

// checkCoarseSums checks the coarse graph's entries got (m×m, dense)
// against want, P's sums added in the order of the rows: to the bit on
// and above the diagonal, whose sums add a cell's rows in that order, and
// within rounding below it, whose entries are those above.
func checkCoarseSums(t *testing.T, m int, want, got []float64) {
	t.Helper()
	for a := range m {
		for q := range m {
			if w, v := want[a*m+q], got[a*m+q]; q >= a && v != w || math.Abs(w-v) > 1e-12*math.Max(1, w) {
				t.Fatalf("coarse (%d, %d) = %v, want %v", a, q, v, w)
			}
			if got[a*m+q] != got[q*m+a] {
				t.Fatalf("coarse (%d, %d) = %v, (%d, %d) = %v", a, q, got[a*m+q], q, a, got[q*m+a])
			}
		}
	}
}

// ringGraph returns a graph of n rows, each joined to the next reach rows
// (cyclically) by weights drawn with the seed, and its operator: a graph
// of many chunks of rows, and of cells, that costs little to build.
func ringGraph(t *testing.T, n, reach int, seed uint64) *operator {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	w := make([]float64, n*reach) // w[i*reach+d-1]: the edge (i, i+d)
	for e := range w {
		w[e] = 0.05 + rng.Float64()
	}
	rowPtr := make([]int64, 1, n+1)
	var col []int32
	var val []float64
	for i := range n {
		type edge struct {
			j int32
			v float64
		}
		var row []edge
		for d := 1; d <= reach; d++ {
			row = append(row, edge{int32((i + d) % n), w[i*reach+d-1]}, edge{int32((i - d + n) % n), w[((i-d+n)%n)*reach+d-1]})
		}
		slices.SortFunc(row, func(a, b edge) int { return int(a.j - b.j) })
		for _, e := range row {
			col, val = append(col, e.j), append(val, e.v)
		}
		rowPtr = append(rowPtr, int64(len(col)))
	}
	g, err := graph.NewCSR(rowPtr, col, val)
	if err != nil {
		t.Fatal(err)
	}
	op, _, _, err := newOperator(context.Background(), g, 3)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// TestCoarseGraphChunks checks the coarse graph of more cells than a
// chunk, and of chunks with more entries than a gather, whose workers
// read their rows of P in the order of the rows: its sums to the bit, on
// the heap and in a scratch file.
func TestCoarseGraphChunks(t *testing.T) {
	op := ringGraph(t, 40000, 24, 7)
	g, n := op.g, op.g.N()
	c, err := grow(context.Background(), op, n/4, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	var first int64 // the entries of the first chunk's cells
	for i, a := range c.of {
		if a < chunkRows {
			first += g.RowPtr[i+1] - g.RowPtr[i]
		}
	}
	if c.m <= 2*chunkRows || first <= 2*gatherEntries {
		t.Fatalf("%d cells, the first %d with %d entries: want more than two chunks, and more than two gathers a chunk (%d entries)", c.m, chunkRows, first, gatherEntries)
	}
	checkConnected(t, g, c)
	want := make(map[[2]int32]float64)
	for i := range n {
		for e := g.RowPtr[i]; e < g.RowPtr[i+1]; e++ {
			want[[2]int32{c.of[i], c.of[g.Col[e]]}] += g.Val[e]
		}
	}
	for _, space := range []*store.ScratchSpace{nil, store.NewScratchSpace(t.TempDir(), 0)} {
		pc, sc, err := coarseGraph(context.Background(), op, c, space, false)
		if err != nil {
			t.Fatal(err)
		}
		entries := 0
		for a := range c.m {
			for e := pc.RowPtr[a]; e < pc.RowPtr[a+1]; e++ {
				q := pc.Col[e]
				w, ok := want[[2]int32{int32(a), q}]
				if mirror := want[[2]int32{q, int32(a)}]; !ok || q >= int32(a) && pc.Val[e] != w || q < int32(a) && pc.Val[e] != mirror {
					t.Fatalf("scratch %s: coarse (%d, %d) = %v, want %v (mirror %v)", sc.Where(), a, q, pc.Val[e], w, mirror)
				}
				entries++
			}
		}
		if entries != len(want) {
			t.Errorf("scratch %s: %d coarse entries, want %d", sc.Where(), entries, len(want))
		}
		if err := sc.Release(); err != nil {
			t.Fatal(err)
		}
	}
}

// spreadByPasses is spread as a pass over P a round: the definition that
// spread's frontier keeps.
func spreadByPasses(op *operator, cur []int32, least []float64) {
	g := op.g
	for {
		next := slices.Clone(cur)
		for i := range cur {
			if cur[i] >= 0 {
				continue
			}
			best, heaviest := int32(-1), 0.0
			for e := g.RowPtr[i]; e < g.RowPtr[i+1]; e++ {
				c, v := cur[g.Col[e]], g.Val[e]
				if c >= 0 && (least == nil || v >= least[i]) && (best < 0 || v > heaviest || v == heaviest && c < best) {
					best, heaviest = c, v
				}
			}
			next[i] = best
		}
		if slices.Equal(next, cur) {
			return
		}
		cur = append(cur[:0], next...)
	}
}

// TestSpread checks spread against rounds of passes over P, from seeds of
// several densities, with and without the strong edges' bound, its
// frontier on the heap and in a scratch file.
func TestSpread(t *testing.T) {
	op := ringGraph(t, 3*chunkRows+123, 3, 9)
	n := op.g.N()
	least, err := leastStrong(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	for _, every := range []int{7, 200, 5000} {
		seeds := make([]int32, n)
		for i := range seeds {
			seeds[i] = -1
			if i%every == 3 {
				seeds[i] = int32(i / every)
			}
		}
		for _, l := range [][]float64{nil, least} {
			want := slices.Clone(seeds)
			spreadByPasses(op, want, l)
			for _, space := range []*store.ScratchSpace{nil, store.NewScratchSpace(t.TempDir(), 0)} {
				got := slices.Clone(seeds)
				if err := spread(context.Background(), op, got, l, space); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Errorf("seeds every %d rows, bound %v, scratch in files %v: the cells differ from rounds of passes", every, l != nil, space != nil)
				}
			}
			if l == nil && slices.Contains(want, -1) {
				t.Errorf("seeds every %d rows: rows without a cell after spreading along every edge", every)
			}
		}
	}
}

// firstRow returns the first row of cell a.
func firstRow(of []int32, a int32) int {
	for i, c := range of {
		if c == a {
			return i
		}
	}
	return -1
}

// checkConnected checks that the rows of each cell are connected by the
// graph's edges between rows of the cell.
func checkConnected(t *testing.T, g *graph.CSR, c *cells) {
	t.Helper()
	seen := make([]bool, g.N())
	for i, a := range c.of {
		if a < 0 || seen[i] {
			continue
		}
		// Row i is the first row of its cell: every row of the cell must be
		// reached from it.
		queue := []int32{int32(i)}
		seen[i] = true
		for len(queue) > 0 {
			r := queue[0]
			queue = queue[1:]
			for _, j := range g.Col[g.RowPtr[r]:g.RowPtr[r+1]] {
				if c.of[j] == a && !seen[j] {
					seen[j] = true
					queue = append(queue, j)
				}
			}
		}
		for j, b := range c.of {
			if b == a && !seen[j] {
				t.Fatalf("cell %d: row %d is not reached from row %d within the cell", a, j, i)
			}
		}
	}
}

// TestSweeps checks the approximate embedding of a start against the
// embedding to the tolerance: on well separated blobs, the spectral
// clustering made of each is the same, and the residuals it reports are
// those of its vectors.
func TestSweeps(t *testing.T) {
	g := graphCase{n: 5000, c: 4, neighbors: 8, spread: 0.25, seed: 9}.build(t)
	labels := func(opt Options) ([]int, *Embedding) {
		t.Helper()
		e, err := Embed(context.Background(), g, opt)
		if err != nil {
			t.Fatal(err)
		}
		st, err := NewStart(e, 1)
		if err != nil {
			t.Fatal(err)
		}
		km, err := st.Memberships(context.Background(), make([]float64, e.N*4), 4, kmeans.Settings{Seed: 1, Starts: 4})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int, len(km.Labels))
		for i, l := range km.Labels {
			out[i] = int(l)
		}
		return out, e
	}
	truth := make([]int, g.N())
	for i := range truth {
		truth[i] = i % 4
	}
	exact, _ := labels(Options{K: 4, Seed: 3})
	approx, e := labels(Options{K: 4, Seed: 3, Sweeps: 1})
	both, err1 := score.ARI(exact, approx)
	ofExact, err2 := score.ARI(truth, exact)
	ofApprox, err3 := score.ARI(truth, approx)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	if both < 0.99 || ofApprox < ofExact-0.01 {
		t.Errorf("ARI of the approximate and exact spectral clusterings %.4f, against the blobs %.4f and %.4f", both, ofApprox, ofExact)
	}
	if e.Iterations != 1 || e.Levels < 1 || e.Passes != 1+DefaultSweepDegree+1 {
		t.Errorf("%d sweeps, %d levels, %d passes", e.Iterations, e.Levels, e.Passes)
	}
	t.Logf("ARI: approximate and exact %.4f, against the blobs %.4f and %.4f", both, ofApprox, ofExact)
	t.Logf("approximate: %d passes, %d levels, values %.6f, residuals %.2g", e.Passes, e.Levels, e.Values, e.Residuals)
}

// TestCellSet checks that a cellSet yields the distinct cells added, in
// increasing order, and is empty after.
func TestCellSet(t *testing.T) {
	for _, m := range []int{1, 63, 64, 65, 4096, 4097, 300_000} {
		s := newCellSet(m)
		rng := rand.New(rand.NewPCG(uint64(m), 1))
		for round := range 3 {
			want := map[int32]bool{}
			for range rng.IntN(3 * (round + 1) * 50) {
				q := int32(rng.IntN(m))
				s.add(q)
				want[q] = true
			}
			var got []int32
			s.drain(func(q int32) { got = append(got, q) })
			if len(got) != len(want) || !slices.IsSorted(got) {
				t.Fatalf("m=%d: drained %d cells (sorted %v), want the %d added", m, len(got), slices.IsSorted(got), len(want))
			}
			for _, q := range got {
				if !want[q] {
					t.Fatalf("m=%d: drained %d, never added", m, q)
				}
			}
			if slices.ContainsFunc(s.bits, func(w uint64) bool { return w != 0 }) || slices.ContainsFunc(s.words, func(w uint64) bool { return w != 0 }) {
				t.Fatalf("m=%d: not empty after drain", m)
			}
		}
	}
}

// TestMirrorUpper checks that mirrorUpper copies the entries above the
// diagonal to those below, and refuses a pattern that is not symmetric,
// in memory and with the entries set aside in files.
func TestMirrorUpper(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rowPtr []int64
		col    []int32
		val    []float64
		want   []float64
		err    bool
	}{
		{"symmetric", []int64{0, 2, 5, 7}, []int32{0, 1, 0, 1, 2, 1, 2}, []float64{1, 2, 9, 3, 4, 8, 5}, []float64{1, 2, 2, 3, 4, 4, 5}, false},
		{"diagonal", []int64{0, 1, 2}, []int32{0, 1}, []float64{1, 2}, []float64{1, 2}, false},
		{"full", []int64{0, 3, 6, 9}, []int32{0, 1, 2, 0, 1, 2, 0, 1, 2}, []float64{1, 2, 3, 9, 4, 5, 9, 9, 6}, []float64{1, 2, 3, 2, 4, 5, 3, 5, 6}, false},
		{"missing below", []int64{0, 2, 2}, []int32{0, 1}, []float64{1, 2}, nil, true},
		{"missing above", []int64{0, 1, 3}, []int32{0, 0, 1}, []float64{1, 2, 3}, nil, true},
		{"other column", []int64{0, 2, 3, 5}, []int32{0, 2, 1, 1, 2}, []float64{1, 2, 3, 4, 5}, nil, true},
	} {
		for _, space := range []*store.ScratchSpace{nil, store.NewScratchSpace(t.TempDir(), 0)} {
			for _, window := range []int{0, 1, 2} { // in files: one group, or groups of 1 and 2 rows
				val := slices.Clone(tc.val)
				err := mirrorUpper(tc.rowPtr, tc.col, val, space, window)
				if (err != nil) != tc.err || err == nil && !slices.Equal(val, tc.want) {
					t.Errorf("%s, set aside %t, window %d: values %v, error %v; want %v, error %v", tc.name, space != nil, window, val, err, tc.want, tc.err)
				}
			}
		}
	}
}
