package graph

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/tile"
)

// clustered returns n rows of p features around 12 centres, every seventh
// row a copy of the one before: data with structure, as the approximate
// search meets it, and ties at distance 0.
func clustered(n, p int, seed uint64) []float64 {
	x := points(n, p, seed)
	for i := range n {
		c := i % 12
		for q := range p {
			x[i*p+q] += 6 * float64((c>>q)&1)
		}
		if i%7 == 6 {
			copy(x[i*p:(i+1)*p], x[(i-1)*p:i*p])
		}
	}
	return x
}

// listRecall returns the recall@m of lists against the exact search
// (itself checked against brute force): the share of each row's exact m
// nearest matched by a list entry no farther than the exact m-th.
func listRecall(t *testing.T, x []float64, n, p, m int, lists *best) float64 {
	exact, _, err := neighbors(context.Background(), x, n, p, m, KNNOptions{Workers: 2}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var hit int
	for i := range n {
		last := exact.d[i*m+m-1]
		got := 0
		for e := range int(lists.cnt[i]) {
			if lists.d[i*m+e] <= last {
				got++
			}
		}
		hit += min(got, m)
	}
	return float64(hit) / float64(n*m)
}

func TestApproxRecall(t *testing.T) {
	for _, tc := range []struct {
		n, p, m, block, probes int
		recall                 float64
	}{
		{3000, 8, 15, 64, 4, 0.99},
		{4000, 16, 30, 128, 8, 0.99},
		{2500, 3, 10, 32, 2, 0.999},
	} {
		t.Run(fmt.Sprintf("n=%d,p=%d,m=%d", tc.n, tc.p, tc.m), func(t *testing.T) {
			x := clustered(tc.n, tc.p, 5)
			if _, err := Partition(context.Background(), x, tc.n, tc.p, tc.block, 1, 2); err != nil {
				t.Fatal(err)
			}
			opt := KNNOptions{Neighbors: tc.m, Leaf: tc.block, Workers: 2, Probes: tc.probes, Recall: tc.recall, Sample: 400}
			lists, sc, st, err := approxNeighbors(context.Background(), x, tc.n, tc.p, tc.m, opt, opt.scratchSpace())
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Release()
			got := listRecall(t, x, tc.n, tc.p, tc.m, lists)
			t.Logf("%d rounds, %d tiles of %d, sampled recall %.4f, true recall %.4f", len(st.Rounds), st.Tiles, st.Leaves*(st.Leaves+1)/2, st.Recall, got)
			if st.Recall < tc.recall && len(st.Rounds) < DefaultRounds {
				t.Errorf("stopped at sampled recall %.4f < %.4f after %d rounds", st.Recall, tc.recall, len(st.Rounds))
			}
			if got < tc.recall-0.01 {
				t.Errorf("true recall %.4f, want at least %.4f", got, tc.recall-0.01)
			}
			if math.Abs(got-st.Recall) > 0.01 {
				t.Errorf("sampled recall %.4f, true %.4f: the sample misleads", st.Recall, got)
			}
			for i := range tc.n {
				if lists.cnt[i] != int32(tc.m) || lists.j[i*tc.m] != int32(i) {
					t.Fatalf("row %d: %d candidates, first %d; want %d, itself first", i, lists.cnt[i], lists.j[i*tc.m], tc.m)
				}
			}
		})
	}
}

// TestRecallSampleExact checks the sample's lists against brute force.
func TestRecallSampleExact(t *testing.T) {
	n, p, m := 2000, 5, 12
	x := clustered(n, p, 3)
	for _, isa := range tile.SupportedISAs() {
		rs, err := newRecallSample(context.Background(), x, n, p, m, 150, 9, 3, isa)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteNeighbors(x, n, p, m)
		if len(rs.rows) != 150 {
			t.Fatalf("%d rows sampled, want 150", len(rs.rows))
		}
		for r, i := range rs.rows {
			got := make([]int, rs.exact.cnt[r])
			for e := range got {
				got[e] = int(rs.exact.j[r*m+e])
			}
			if !slices.Equal(got, want[i]) {
				t.Fatalf("kernel %v: row %d: %v, want %v", isa, i, got, want[i])
			}
		}
	}
}

// TestQueryRecallExact checks the exact lists of query rows, which are
// not rows of x, against brute force, and their recall: 1 for the exact
// lists, the share matched for lists missing their nearest entries.
func TestQueryRecallExact(t *testing.T) {
	n, p, m, s := 2000, 5, 12, 40
	x := clustered(n, p, 3)
	q := clustered(s, p, 4)
	rows := SampleRows(500, s, 2)
	for _, isa := range tile.SupportedISAs() {
		for _, workers := range []int{1, 3} {
			rs, err := NewQueryRecall(context.Background(), q, rows, x, n, p, m, workers, isa)
			if err != nil {
				t.Fatal(err)
			}
			dists := make([][]float64, s)
			for r := range s {
				d := make([]float64, n)
				for j := range n {
					d[j] = tile.SqDist(q[r*p:(r+1)*p], x[j*p:(j+1)*p])
				}
				slices.Sort(d)
				dists[r] = d
				for e := range m {
					if got := rs.exact.d[r*m+e]; got != d[e] {
						t.Fatalf("kernel %v, %d workers: query %d, entry %d: %v, want %v", isa, workers, r, e, got, d[e])
					}
				}
			}
			if got := rs.Recall(func(r int) []float64 { return dists[r][:m] }); got != 1 {
				t.Fatalf("recall of the exact lists %v, want 1", got)
			}
			// Lists without their m/4 nearest: an entry matches if no
			// farther than the exact m-th (so ties count).
			hit := 0
			for r := range s {
				for _, d := range dists[r][m/4 : m/4+m] {
					if d <= dists[r][m-1] {
						hit++
					}
				}
			}
			if got, want := rs.Recall(func(r int) []float64 { return dists[r][m/4 : m/4+m] }), float64(hit)/float64(s*m); got != want || want == 1 {
				t.Fatalf("recall of lists without their %d nearest %v, want %v", m/4, got, want)
			}
		}
	}
	if !slices.IsSorted(rows) || len(rows) != s {
		t.Fatalf("SampleRows: %v", rows)
	}
}

// TestApproxSameBits checks that the approximate graph does not depend on
// the workers, the kernel, or where its scratch is: the heap, files,
// anonymous memory, or a budget that holds some pieces and not others; nor
// on the leaf rounds being run by parts of the rows (searchByParts), as
// they are where the lists are in a file, of any number of leaves.
func TestApproxSameBits(t *testing.T) {
	n, p := 3000, 6
	x := clustered(n, p, 8)
	var want *CSR
	for _, tc := range []struct {
		workers  int
		kernel   tile.ISA
		scratch  string
		memory   int64
		partRows int
	}{{1, tile.ISAAuto, "", 0, 0}, {2, tile.ISAAuto, t.TempDir(), 0, 0}, {5, tile.ISAGo, "", 0, 0}, {3, tile.ISAAuto, t.TempDir(), 0, 0},
		{2, tile.ISAAuto, t.TempDir(), 1 << 30, 0}, {2, tile.ISAAuto, t.TempDir(), 200_000, 0},
		{2, tile.ISAAuto, "", 0, 64}, {3, tile.ISAGo, "", 0, 1000}, {1, tile.ISAAuto, "", 0, 2900}, {2, tile.ISAAuto, t.TempDir(), 0, n}} {
		xs := slices.Clone(x)
		order, err := Partition(context.Background(), xs, n, p, 64, 4, tc.workers)
		if err != nil {
			t.Fatal(err)
		}
		for q, i := range order {
			if !slices.Equal(xs[q*p:(q+1)*p], x[int(i)*p:int(i+1)*p]) {
				t.Fatalf("workers=%d: position %d holds row %v, not row %d", tc.workers, q, xs[q*p:(q+1)*p], i)
			}
		}
		g, err := KNN(context.Background(), xs, n, p, KNNOptions{Method: Approximate, Weights: SelfTuning, Neighbors: 10,
			Leaf: 64, Workers: tc.workers, Kernel: tc.kernel, ScratchDir: tc.scratch, ScratchMemory: tc.memory, Probes: 3, partRows: tc.partRows})
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = g
		} else if !sameCSR(want, g) {
			t.Errorf("workers=%d kernel %v scratch=%q memory=%d part rows %d: a different graph", tc.workers, tc.kernel, tc.scratch, tc.memory, tc.partRows)
		}
	}
}

// TestApproxDuplicates runs the search on a data set of few distinct rows:
// every row's list is its copies, at distance 0.
func TestApproxDuplicates(t *testing.T) {
	n, p, m := 1500, 3, 8
	x := make([]float64, n*p)
	for i := range n {
		for q := range p {
			x[i*p+q] = float64((i % 5) * (q + 1))
		}
	}
	if _, err := Partition(context.Background(), x, n, p, 50, 1, 2); err != nil {
		t.Fatal(err)
	}
	lists, sc, st, err := approxNeighbors(context.Background(), x, n, p, m, KNNOptions{Leaf: 50, Workers: 2, Probes: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	if st.Recall != 1 {
		t.Errorf("sampled recall %v, want 1", st.Recall)
	}
	for i := range n {
		for e := 1; e < m; e++ {
			if lists.d[i*m+e] != 0 {
				t.Fatalf("row %d: candidate %d at distance %v, want a copy", i, lists.j[i*m+e], lists.d[i*m+e])
			}
		}
	}
}

// TestRenumber checks that the exact graph of the rows in Partition's
// order, renumbered, is the exact graph of the rows in the input's order,
// in memory and in a file. The rows are distinct and their distances too,
// so that no tie is broken by the numbering.
func TestRenumber(t *testing.T) {
	n, p := 1200, 5
	x := make([]float64, n*p)
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	opt := KNNOptions{Method: Exact, Weights: SelfTuning, Neighbors: 9, Workers: 2}
	want, err := KNN(context.Background(), x, n, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	xs := slices.Clone(x)
	order, err := Partition(context.Background(), xs, n, p, 100, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	g, err := KNN(context.Background(), xs, n, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		path     string
		runBytes int
	}{
		{"", renumberRunBytes},
		{"one-run.csr", renumberRunBytes},
		{"scans.csr", 12 * int(g.RowPtr[n]) / 3},  // 3 or 4 runs, each a scan of g
		{"files.csr", 12 * int(g.RowPtr[n]) / 20}, // about 20 runs, from files
		{"rows.csr", 1},                           // a row a run
	} {
		path := tc.path
		if path != "" {
			path = filepath.Join(dir, path)
		}
		r, err := g.renumber(context.Background(), order, path, 7, tc.runBytes)
		if err != nil {
			t.Fatal(err)
		}
		if !sameCSR(r, want) {
			t.Errorf("path %q, runs of %d bytes: the renumbered graph differs from the graph in input order", tc.path, tc.runBytes)
		}
		r.Close()
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "runs-*")); len(left) > 0 {
		t.Errorf("the runs' files are left: %v", left)
	}
	bad := slices.Clone(order)
	bad[0] = bad[1]
	if _, err := g.Renumber(context.Background(), bad, "", 0); err == nil {
		t.Error("an order with a row twice: no error")
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("stopped"))
	path := filepath.Join(t.TempDir(), "stopped.csr")
	for _, runBytes := range []int{renumberRunBytes, 1} {
		if _, err := g.renumber(ctx, order, path, 0, runBytes); err == nil || err.Error() != "stopped" {
			t.Errorf("runs of %d bytes: a done context: %v, want its cause", runBytes, err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a stopped renumbering left %s (%v)", path, err)
	}
}

// TestApproxOrderIsExact checks that the approximate search with every
// pair of leaves searched, given Partition's order, finds the exact graph
// of the rows in the input's order, renumbered, with the same bits: on
// integer features with many copies of each row and many equal distances,
// whose ties go to the lower input row. Without the order the ties go to
// the lower position, and the graph is another.
func TestApproxOrderIsExact(t *testing.T) {
	n, p, leaf := 1500, 3, 100
	x := make([]float64, n*p)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range n {
		if i%3 == 2 { // every third row a copy of an earlier one
			j := rng.IntN(i)
			copy(x[i*p:(i+1)*p], x[j*p:(j+1)*p])
			continue
		}
		for q := range p {
			x[i*p+q] = float64(rng.IntN(6))
		}
	}
	opt := KNNOptions{Weights: SelfTuning, Neighbors: 12, Workers: 2}
	exact := opt
	exact.Method = Exact
	want, err := KNN(context.Background(), x, n, p, exact)
	if err != nil {
		t.Fatal(err)
	}
	xs := slices.Clone(x)
	order, err := Partition(context.Background(), xs, n, p, leaf, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		order []int32
		same  bool
	}{{order, true}, {nil, false}} {
		approx := opt
		approx.Method, approx.Leaf, approx.Probes, approx.Order = Approximate, leaf, (n+leaf-1)/leaf, tc.order
		g, err := KNN(context.Background(), xs, n, p, approx)
		if err != nil {
			t.Fatal(err)
		}
		r, err := g.Renumber(context.Background(), order, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if sameCSR(r, want) != tc.same {
			t.Errorf("order given %v: renumbered graph equal to the exact one %v, want %v", tc.order != nil, !tc.same, tc.same)
		}
	}
	bad := slices.Clone(order)
	bad[0] = bad[1]
	for _, o := range []KNNOptions{{Method: Approximate, Order: bad}, {Method: Approximate, Order: order[1:]}, {Method: Exact, Order: order}} {
		if _, err := KNN(context.Background(), xs, n, p, o); err == nil {
			t.Errorf("order of %d rows with method %v: no error", len(o.Order), o.Method)
		}
	}
}

// TestApproxListsDistinct checks that no list holds a row twice: the
// seeds of the lists are offered again by the first tiles.
func TestApproxListsDistinct(t *testing.T) {
	n, p, m := 2000, 4, 12
	x := clustered(n, p, 6)
	lists, sc, _, err := approxNeighbors(context.Background(), x, n, p, m, KNNOptions{Leaf: 100, Workers: 2, Probes: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	for i := range n {
		row := slices.Clone(lists.j[i*m : i*m+int(lists.cnt[i])])
		slices.Sort(row)
		if len(slices.Compact(row)) != int(lists.cnt[i]) {
			t.Fatalf("row %d: a row twice in %v", i, lists.j[i*m:i*m+int(lists.cnt[i])])
		}
	}
}

// TestApproxDescent runs the search with one round of leaf pairs of few
// probes, so that neighbour descent does most of the work, and checks its
// lists against the exact search's, and that they do not depend on the
// workers, the kernel or where the lists are kept.
func TestApproxDescent(t *testing.T) {
	golden := listsGolden{path: filepath.Join("testdata", "descent.golden")}
	defer golden.finish(t)
	for _, tc := range []struct {
		n, p, m, leaf int
		recall        float64
	}{
		{6000, 8, 15, 64, 0.99},
		{8000, 16, 30, 128, 0.99},
		{4000, 3, 10, 32, 0.99},
	} {
		t.Run(fmt.Sprintf("n=%d,p=%d,m=%d", tc.n, tc.p, tc.m), func(t *testing.T) {
			x := clustered(tc.n, tc.p, 7)
			if _, err := Partition(context.Background(), x, tc.n, tc.p, tc.leaf, 1, 2); err != nil {
				t.Fatal(err)
			}
			var want *best
			var wantRounds []KNNRound
			for _, w := range []struct {
				workers int
				dir     string
				kernel  tile.ISA
				memory  int64
				// backward's ranges and chunks: one of each, or many
				ranges, chunk int
				full          bool // forward without its shortcut
				window        int  // offers set aside beyond this many rows
			}{{2, "", tile.ISAAuto, 0, 0, 0, false, 0}, {1, t.TempDir(), tile.ISAAuto, 0, 0, 0, false, 0}, {5, "", tile.ISAGo, 0, 0, 0, false, 0},
				{2, t.TempDir(), tile.ISAAuto, 1 << 20, 0, 0, false, 0}, {3, "", tile.ISAAuto, 0, 97, 1000, false, 0}, {1, "", tile.ISAAuto, 0, 50, 2000, false, 0},
				{2, "", tile.ISAAuto, 0, 0, 0, true, 0}, {2, t.TempDir(), tile.ISAAuto, 0, 0, 0, false, 300}, {3, t.TempDir(), tile.ISAAuto, 1 << 20, 97, 1000, false, 1000}} {
				opt := KNNOptions{Neighbors: tc.m, Leaf: tc.leaf, Workers: w.workers, Kernel: w.kernel, Probes: 3, LeafRounds: 1,
					Recall: 0.995, Rounds: 20, ScratchDir: w.dir, ScratchMemory: w.memory, Sample: 300,
					backwardRange: w.ranges, backwardChunk: w.chunk, fullForward: w.full, spillWindow: w.window}
				lists, sc, st, err := approxNeighbors(context.Background(), x, tc.n, tc.p, tc.m, opt, opt.scratchSpace())
				if err != nil {
					t.Fatal(err)
				}
				defer sc.Release()
				descents := descentRounds(st.Rounds)
				if descents == 0 {
					t.Fatalf("workers=%d: no round of descent in %+v", w.workers, st.Rounds)
				}
				var spilled int64
				for _, r := range st.Rounds {
					spilled += r.Spilled
				}
				if (spilled > 0) != (w.window > 0) {
					t.Errorf("window %d: %d bytes of offers set aside", w.window, spilled)
				}
				if want == nil {
					want, wantRounds = lists, st.Rounds
					golden.check(t, fmt.Sprintf("n=%d,p=%d,m=%d", tc.n, tc.p, tc.m), lists)
					got := listRecall(t, x, tc.n, tc.p, tc.m, lists)
					t.Logf("%d rounds (%d of descent), sampled recall %.4f, true recall %.4f", len(st.Rounds), descents, st.Recall, got)
					for k, r := range st.Rounds {
						t.Logf("round %d: %+v", k+1, r)
					}
					if got < tc.recall {
						t.Errorf("true recall %.4f, want at least %.4f", got, tc.recall)
					}
					for i := range tc.n {
						row := slices.Clone(lists.j[i*tc.m : (i+1)*tc.m])
						if lists.cnt[i] != int32(tc.m) || row[0] != int32(i) {
							t.Fatalf("row %d: %d candidates, first %d; want %d, itself first", i, lists.cnt[i], row[0], tc.m)
						}
						slices.Sort(row)
						if len(slices.Compact(row)) != tc.m {
							t.Fatalf("row %d: a row twice in %v", i, lists.j[i*tc.m:(i+1)*tc.m])
						}
					}
					continue
				}
				if !slices.Equal(want.j, lists.j) || !slices.Equal(want.d, lists.d) || !slices.Equal(want.cnt, lists.cnt) {
					t.Errorf("workers=%d dir=%q kernel %v ranges %d chunk %d full %v window %d: different lists", w.workers, w.dir, w.kernel, w.ranges, w.chunk, w.full, w.window)
				}
				for k, r := range st.Rounds {
					if r.Spilled = 0; k >= len(wantRounds) || !sameRound(r, wantRounds[k]) {
						t.Errorf("window %d: round %d %+v, want %+v", w.window, k+1, r, wantRounds)
						break
					}
				}
			}
		})
	}
}

// TestApproxDescentDuplicates runs neighbour descent on rows that are
// copies of few distinct ones: every list must end as copies at distance
// 0 (ties count for the recall, whichever copies a list holds), and the
// lists must not depend on the workers.
func TestApproxDescentDuplicates(t *testing.T) {
	n, p, m := 3000, 3, 8
	x := make([]float64, n*p)
	for i := range n {
		for q := range p {
			x[i*p+q] = float64((i % 7) * (q + 1))
		}
	}
	if _, err := Partition(context.Background(), x, n, p, 50, 1, 2); err != nil {
		t.Fatal(err)
	}
	var want *best
	for _, workers := range []int{1, 3} {
		lists, sc, st, err := approxNeighbors(context.Background(), x, n, p, m,
			KNNOptions{Leaf: 50, Workers: workers, Probes: 2, LeafRounds: 1, Recall: 2, Rounds: 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer sc.Release()
		if !st.Rounds[1].Descent || st.Recall != 1 {
			t.Errorf("workers=%d: rounds %+v, sampled recall %v; want descent in round 2, and recall 1 at the end", workers, st.Rounds, st.Recall)
		}
		for i := range n {
			if lists.cnt[i] != int32(m) || lists.j[i*m] != int32(i) {
				t.Fatalf("row %d: %d candidates, first %d; want %d, itself first", i, lists.cnt[i], lists.j[i*m], m)
			}
			for e := 1; e < m; e++ {
				if lists.d[i*m+e] != 0 {
					t.Fatalf("workers=%d: row %d: candidate %d at distance %v, want a copy", workers, i, lists.j[i*m+e], lists.d[i*m+e])
				}
			}
		}
		if want == nil {
			want = lists
		} else if !slices.Equal(want.j, lists.j) || !slices.Equal(want.d, lists.d) {
			t.Errorf("workers=%d: different lists", workers)
		}
	}
}

// BenchmarkApproxRounds times an approximate search of two rounds, the
// second of leaf pairs or of neighbour descent, on the data of
// BenchmarkKNN, and reports rows a second and the sampled recall reached.
func BenchmarkApproxRounds(b *testing.B) {
	const n, p, m, leaf = 50_000, 16, 30, 512
	x := benchPoints(n, p)
	if _, err := Partition(context.Background(), x, n, p, leaf, 1, 2); err != nil {
		b.Fatal(err)
	}
	for _, kind := range []struct {
		name       string
		leafRounds int
	}{{"leaf", 0}, {"descent", 1}} {
		b.Run(kind.name, func(b *testing.B) {
			var recall float64
			for b.Loop() {
				opt := KNNOptions{Leaf: leaf, Workers: 2, Probes: 4, LeafRounds: kind.leafRounds, Recall: 2, Rounds: 2, Sample: 500}
				_, sc, st, err := approxNeighbors(context.Background(), x, n, p, m, opt, opt.scratchSpace())
				if err != nil {
					b.Fatal(err)
				}
				sc.Release()
				if got := st.Rounds[1].Descent; got != (kind.leafRounds > 0) {
					b.Fatalf("round 2 of descent: %v", got)
				}
				recall = st.Recall
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(recall, "recall")
		})
	}
}

// TestDescentProgress checks that a round of neighbour descent reports
// its progress: blocks of DescentBlock rows, counted from 1 to all of them.
func TestDescentProgress(t *testing.T) {
	n, p, m := 9000, 4, 10
	x := clustered(n, p, 3)
	if _, err := Partition(context.Background(), x, n, p, 64, 1, 2); err != nil {
		t.Fatal(err)
	}
	done := map[string][]int{}
	opt := KNNOptions{Leaf: 64, Workers: 3, Probes: 1, LeafRounds: 1, Recall: 2, Rounds: 3,
		Progress: func(pass string, d, total int) {
			if strings.HasSuffix(pass, DescentPass) {
				if want := (n + DescentBlock - 1) / DescentBlock; total != want {
					t.Errorf("%s: total %d, want %d", pass, total, want)
				}
				done[pass] = append(done[pass], d)
			}
		}}
	_, sc, st, err := approxNeighbors(context.Background(), x, n, p, m, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	descents := descentRounds(st.Rounds)
	if descents == 0 || len(done) != descents {
		t.Fatalf("%d rounds of descent, progress of %d passes: %v", descents, len(done), done)
	}
	for pass, d := range done {
		if !slices.Equal(d, []int{1, 2, 3}) {
			t.Errorf("%s: progress %v, want 1, 2, 3", pass, d)
		}
	}
	// LeafRounds < 0: no descent.
	opt.LeafRounds, opt.Progress = -1, nil
	_, sc2, st, err := approxNeighbors(context.Background(), x, n, p, m, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sc2.Release()
	for i, r := range st.Rounds {
		if r.Descent {
			t.Errorf("LeafRounds -1: round %d is one of descent", i+1)
		}
	}
}

// descentRounds counts the rounds of neighbour descent among rounds.
func descentRounds(rounds []KNNRound) int {
	n := 0
	for _, r := range rounds {
		if r.Descent {
			n++
		}
	}
	return n
}

// sameRound reports whether two rounds did the same, their Spilled and
// Parts aside.
func sameRound(r, s KNNRound) bool {
	r.Spilled, s.Spilled, r.Parts, s.Parts = 0, 0, 0, 0
	return r == s || r.Tiles == s.Tiles && r.Descent == s.Descent && r.Changed == s.Changed && math.IsNaN(r.Recall) && math.IsNaN(s.Recall)
}

// listsGolden checks lists against a golden file of their checksums, a
// line a case, and rewrites it with -update: the lists of a search are
// its arithmetic's, and a change that should keep them (a layout, an I/O
// plan) must give them to the bit. The file is amd64's: where Go fuses
// multiply-adds (arm64) the distances may differ in rounding.
type listsGolden struct {
	path string
	got  []string
}

func (g *listsGolden) check(t *testing.T, name string, lists *best) {
	t.Helper()
	var b []byte
	for i, j := range lists.j {
		b = binary.LittleEndian.AppendUint32(b, uint32(j))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(lists.d[i]))
	}
	for _, c := range lists.cnt {
		b = binary.LittleEndian.AppendUint32(b, uint32(c))
	}
	line := fmt.Sprintf("%s %016x", name, crc64.Checksum(b, crc64.MakeTable(crc64.ECMA)))
	g.got = append(g.got, line)
	if *update || runtime.GOARCH != "amd64" {
		return
	}
	want, err := os.ReadFile(g.path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if !slices.Contains(strings.Split(string(want), "\n"), line) {
		t.Errorf("lists %s: checksum %s not in %s: the search's lists changed", name, line, g.path)
	}
}

// finish writes the file with -update, on amd64.
func (g *listsGolden) finish(t *testing.T) {
	if !*update || runtime.GOARCH != "amd64" || t.Failed() {
		return
	}
	if err := os.WriteFile(g.path, []byte(strings.Join(g.got, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
