package kmeans

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// blobs returns n rows of p features around k well-separated centers
// (cluster c centered at 10·c in every feature, unit spread) and the true
// cluster of each row.
func blobs(n, p, k int, seed uint64) ([]float64, []int32) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n*p)
	truth := make([]int32, n)
	for i := range n {
		c := i % k
		truth[i] = int32(c)
		for q := range p {
			x[i*p+q] = 10*float64(c) + rng.NormFloat64()
		}
	}
	return x, truth
}

// normals returns m standard normal values drawn from the PCG stream
// seeded with seed1 and seed2.
func normals(m int, seed1, seed2 uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed1, seed2))
	x := make([]float64, m)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// checkFixedPoint verifies a converged result by brute force: every row's
// label is its nearest center (lowest index on ties), every nonempty center
// is the mean of its rows, and Sizes and Inertia match.
func checkFixedPoint(t *testing.T, x []float64, n, p int, r *Result) {
	t.Helper()
	k := r.K
	sums := make([]float64, k*p)
	sizes := make([]int, k)
	var inertia float64
	for i := range n {
		xi := x[i*p : (i+1)*p]
		best, bd := -1, math.Inf(1)
		for c := range k {
			var d float64
			for q := range p {
				t := xi[q] - r.Centers[c*p+q]
				d += t * t
			}
			if d < bd {
				best, bd = c, d
			}
		}
		l := int(r.Labels[i])
		var dl float64
		for q := range p {
			t := xi[q] - r.Centers[l*p+q]
			dl += t * t
		}
		if dl > bd*(1+1e-12)+1e-12 {
			t.Fatalf("row %d: label %d at squared distance %g, but center %d is at %g", i, l, dl, best, bd)
		}
		inertia += dl
		sizes[l]++
		for q := range p {
			sums[l*p+q] += xi[q]
		}
	}
	if !slices.Equal(sizes, r.Sizes) {
		t.Fatalf("sizes %v, counted %v", r.Sizes, sizes)
	}
	for c := range k {
		if sizes[c] == 0 {
			continue
		}
		for q := range p {
			mean := sums[c*p+q] / float64(sizes[c])
			if d := math.Abs(mean - r.Centers[c*p+q]); d > 1e-12*(1+math.Abs(mean)) {
				t.Fatalf("center %d feature %d: %g, mean of its rows %g", c, q, r.Centers[c*p+q], mean)
			}
		}
	}
	if d := math.Abs(inertia - r.Inertia); d > 1e-10*(1+inertia) {
		t.Fatalf("inertia %g, recomputed %g", r.Inertia, inertia)
	}
}

func TestClusterRecoversBlobs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n, p, k int
		starts  int
		sample  int
	}{
		{name: "two", n: 50, p: 2, k: 2, starts: 1},
		{name: "five", n: 500, p: 3, k: 5, starts: 1},
		{name: "several chunks", n: 3001, p: 4, k: 7, starts: 3},
		{name: "starts on a sample", n: 9000, p: 4, k: 7, starts: 4, sample: 700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, truth := blobs(tc.n, tc.p, tc.k, 3)
			r, err := Cluster(context.Background(), x, tc.n, tc.p, tc.k, Settings{Starts: tc.starts, Workers: 2, Sample: tc.sample})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Converged {
				t.Fatalf("not converged after %d iterations", r.Iterations)
			}
			checkFixedPoint(t, x, tc.n, tc.p, r)
			// Each true blob maps to one cluster and vice versa.
			match := map[int32]int32{}
			back := map[int32]int32{}
			for i, c := range r.Labels {
				if m, ok := match[truth[i]]; ok && m != c {
					t.Fatalf("blob %d split between clusters %d and %d", truth[i], m, c)
				}
				if b, ok := back[c]; ok && b != truth[i] {
					t.Fatalf("cluster %d merges blobs %d and %d", c, b, truth[i])
				}
				match[truth[i]], back[c] = c, truth[i]
			}
			if len(r.Inertias) != tc.starts || slices.Min(r.Inertias) != r.Inertias[r.Start] {
				t.Fatalf("start %d returned, starts had %v", r.Start, r.Inertias)
			}
			if tc.sample == 0 && r.Inertias[r.Start] != r.Inertia {
				t.Fatalf("start %d with inertia %g returned, starts had %v", r.Start, r.Inertia, r.Inertias)
			}
		})
	}
}

func TestSameBitsAnyWorkers(t *testing.T) {
	// Overlapping clusters, so Lloyd takes many iterations, and n spans
	// several chunks.
	const n, p, k = 2600, 5, 6
	x := normals(n*p, 9, 9)
	ctx := context.Background()
	ref, err := Cluster(ctx, x, n, p, k, Settings{Seed: 11, Workers: 1, Starts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Iterations < 3 {
		t.Fatalf("only %d iterations: the test does not exercise Lloyd", ref.Iterations)
	}
	checkFixedPoint(t, x, n, p, ref)
	for _, workers := range []int{1, 2, 3, 8} {
		r, err := Cluster(ctx, x, n, p, k, Settings{Seed: 11, Workers: workers, Starts: 2})
		if err != nil {
			t.Fatal(err)
		}
		s1, err := Cluster(ctx, x, n, p, k, Settings{Seed: 11, Workers: 1, Starts: 3, Sample: 500})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Cluster(ctx, x, n, p, k, Settings{Seed: 11, Workers: workers, Starts: 3, Sample: 500})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Centers, s1.Centers) || !slices.Equal(s.Labels, s1.Labels) || s.Inertia != s1.Inertia {
			t.Fatalf("workers=%d, starts on a sample: result differs from workers=1", workers)
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.Inertia != ref.Inertia || !slices.Equal(r.Centers, ref.Centers) || !slices.Equal(r.Labels, ref.Labels) ||
			r.Iterations != ref.Iterations || !slices.Equal(r.Inertias, ref.Inertias) {
			t.Fatalf("workers=%d: result differs from workers=1 (inertia %v vs %v)", workers, r.Inertia, ref.Inertia)
		}
		c, err := Seed(ctx, x, n, p, k, 11, workers)
		if err != nil {
			t.Fatal(err)
		}
		c1, _ := Seed(ctx, x, n, p, k, 11, 1)
		if !slices.Equal(c, c1) {
			t.Fatalf("workers=%d: seeding differs from workers=1", workers)
		}
	}
	other, err := Cluster(ctx, x, n, p, k, Settings{Seed: 12, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(other.Centers, ref.Centers) {
		t.Fatal("seeds 11 and 12 gave the same centers: the seed is not used")
	}
}

// TestOrder checks that a run on permuted rows, given the permutation,
// is the run on the rows in the input's order: the same centers, inertia
// and labels, bit for bit, the labels by permuted row; after a sample, the
// same labels, the refinement's sums rounded in another order. Every
// fifth row is a copy of an earlier one, and the features are coarse, so
// that draws and distances tie.
func TestOrder(t *testing.T) {
	const n, p, k = 2600, 3, 7
	x := normals(n*p, 3, 4)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range x {
		x[i] = math.Round(2 * x[i])
	}
	for i := 5; i < n; i += 5 {
		j := rng.IntN(i)
		copy(x[i*p:(i+1)*p], x[j*p:(j+1)*p])
	}
	order := make([]int32, n)
	for q := range order {
		order[q] = int32(q)
	}
	rng.Shuffle(n, func(a, b int) { order[a], order[b] = order[b], order[a] })
	xs := make([]float64, n*p)
	for q, i := range order {
		copy(xs[q*p:(q+1)*p], x[int(i)*p:int(i+1)*p])
	}
	ctx := context.Background()
	for _, s := range []Settings{{Seed: 3, Starts: 3, Workers: 2}, {Seed: 4, Starts: 4, Workers: 3, Sample: 700}} {
		want, err := Cluster(ctx, x, n, p, k, s)
		if err != nil {
			t.Fatal(err)
		}
		s.Order = order
		got, err := Cluster(ctx, xs, n, p, k, s)
		if err != nil {
			t.Fatal(err)
		}
		for q, i := range order {
			if got.Labels[q] != want.Labels[i] {
				t.Fatalf("sample %d: row %d (input row %d) in cluster %d, want %d", s.Sample, q, i, got.Labels[q], want.Labels[i])
			}
		}
		if !slices.Equal(got.Sizes, want.Sizes) || !slices.Equal(got.Inertias, want.Inertias) || got.Start != want.Start {
			t.Errorf("sample %d: sizes %v, start inertias %v (start %d), want %v, %v (%d)", s.Sample, got.Sizes, got.Inertias, got.Start,
				want.Sizes, want.Inertias, want.Start)
		}
		if s.Sample == 0 && (!slices.Equal(got.Centers, want.Centers) || got.Inertia != want.Inertia) {
			t.Errorf("centers or inertia (%v, want %v) differ", got.Inertia, want.Inertia)
		}
		for c := range got.Centers {
			if math.Abs(got.Centers[c]-want.Centers[c]) > 1e-12*(1+math.Abs(want.Centers[c])) {
				t.Errorf("sample %d: center value %d is %v, want %v", s.Sample, c, got.Centers[c], want.Centers[c])
			}
		}
		s.Order = nil
		if plain, err := Cluster(ctx, xs, n, p, k, s); err != nil {
			t.Fatal(err)
		} else if slices.Equal(plain.Inertias, want.Inertias) {
			t.Errorf("sample %d: the permuted rows without their order give the same starts: the test shows nothing", s.Sample)
		}
	}
	bad := slices.Clone(order)
	bad[0] = bad[1]
	for _, o := range [][]int32{bad, order[1:]} {
		if _, err := Cluster(ctx, xs, n, p, k, Settings{Order: o}); err == nil || !strings.Contains(err.Error(), "order") {
			t.Errorf("order of %d rows, not a permutation: error %v", len(o), err)
		}
	}
}

func TestSeedPicksDistinctRows(t *testing.T) {
	const n, p, k = 400, 2, 8
	x, _ := blobs(n, p, k, 5)
	c, err := Seed(context.Background(), x, n, p, k, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[[2]float64]int{}
	for i := range n {
		rows[[2]float64{x[i*p], x[i*p+1]}] = i
	}
	blob := map[int]bool{}
	for j := range k {
		i, ok := rows[[2]float64{c[j*p], c[j*p+1]}]
		if !ok {
			t.Fatalf("center %d is not a row of x", j)
		}
		blob[i%k] = true
	}
	// Blobs 10 apart with unit spread: D² sampling lands in a new blob
	// with overwhelming probability at every draw.
	if len(blob) != k {
		t.Fatalf("k-means++ put the %d centers in %d blobs", k, len(blob))
	}
}

func TestFewerDistinctRowsThanClusters(t *testing.T) {
	// 7 rows, 3 distinct, k = 5: two clusters must stay empty.
	x := []float64{0, 0, 1, 1, 0, 0, 5, 5, 1, 1, 5, 5, 0, 0}
	const n, p, k = 7, 2, 5
	for seed := range uint64(20) {
		r, err := Cluster(context.Background(), x, n, p, k, Settings{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		checkFixedPoint(t, x, n, p, r)
		empty := 0
		for _, s := range r.Sizes {
			if s == 0 {
				empty++
			}
		}
		if empty != 2 || r.Inertia != 0 {
			t.Fatalf("seed %d: sizes %v, inertia %g; want 3 nonempty clusters and inertia 0", seed, r.Sizes, r.Inertia)
		}
		for _, v := range r.Centers {
			if math.IsNaN(v) {
				t.Fatalf("seed %d: NaN center", seed)
			}
		}
	}
}

func TestFillEmpty(t *testing.T) {
	// Rows on a line; center 2 is far from every row, so the assignment
	// leaves it empty and the farthest row (x = 9, from center 1) moves there.
	x := []float64{0, 1, 2, 7, 8, 9}
	m := &model{x: x, n: 6, p: 1, k: 3, workers: 1}
	centers := []float64{1, 7, 100}
	labels := make([]int32, 6)
	dist := make([]float64, 6)
	s, err := m.assign(context.Background(), centers, labels, dist)
	if err != nil {
		t.Fatal(err)
	}
	if s.counts[2] != 0 {
		t.Fatalf("cluster 2 has %d rows before the repair", s.counts[2])
	}
	m.fillEmpty(s, labels, dist)
	if want := []int32{0, 0, 0, 1, 1, 2}; !slices.Equal(labels, want) {
		t.Fatalf("labels %v, want %v", labels, want)
	}
	if want := []int{3, 2, 1}; !slices.Equal(s.counts, want) {
		t.Fatalf("counts %v, want %v", s.counts, want)
	}
	if want := []float64{3, 15, 9}; !slices.Equal(s.sums, want) {
		t.Fatalf("sums %v, want %v", s.sums, want)
	}
	// 1 + 0 + 1 + 0 + 1 (rows 0..4), row 5 now sits on its own center.
	if s.inertia != 3 {
		t.Fatalf("inertia %g, want 3", s.inertia)
	}
}

func TestEdgeCases(t *testing.T) {
	ctx := context.Background()
	t.Run("k=1 is the mean", func(t *testing.T) {
		x := []float64{1, 2, 3, 4, 5, 9}
		r, err := Cluster(ctx, x, 3, 2, 1, Settings{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Centers, []float64{3, 5}) || r.Inertia != 13+1+20 || r.Sizes[0] != 3 {
			t.Fatalf("centers %v inertia %g sizes %v; want [3 5], 34, [3]", r.Centers, r.Inertia, r.Sizes)
		}
	})
	t.Run("k=n puts every row alone", func(t *testing.T) {
		x := []float64{3, 1, 2, 8}
		r, err := Cluster(ctx, x, 4, 1, 4, Settings{Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		if r.Inertia != 0 || !slices.Equal(r.Sizes, []int{1, 1, 1, 1}) {
			t.Fatalf("inertia %g sizes %v", r.Inertia, r.Sizes)
		}
	})
	t.Run("n=1", func(t *testing.T) {
		r, err := Cluster(ctx, []float64{7, 8}, 1, 2, 1, Settings{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Centers, []float64{7, 8}) || r.Labels[0] != 0 || r.Inertia != 0 {
			t.Fatalf("got %+v", r)
		}
	})
	for _, tc := range []struct {
		name    string
		x       []float64
		n, p, k int
		want    string
	}{
		{name: "k > n", x: []float64{1, 2}, n: 2, p: 1, k: 3, want: "k = 3 is larger than the number of rows (2)"},
		{name: "k = 0", x: []float64{1, 2}, n: 2, p: 1, k: 0, want: "k must be >= 1"},
		{name: "no rows", x: nil, n: 0, p: 1, k: 1, want: "need n >= 1"},
		{name: "size", x: []float64{1, 2, 3}, n: 2, p: 2, k: 1, want: "have 3 values, want n*p = 4"},
		{name: "NaN", x: []float64{1, 2, math.NaN(), 4}, n: 2, p: 2, k: 1, want: "row 1, feature 0: value NaN is not finite"},
		{name: "Inf", x: []float64{1, math.Inf(-1)}, n: 2, p: 1, k: 1, want: "row 1, feature 0: value -Inf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Cluster(ctx, tc.x, tc.n, tc.p, tc.k, Settings{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if _, err := Seed(ctx, tc.x, tc.n, tc.p, tc.k, 0, 1); err == nil {
				t.Fatal("Seed accepted what Cluster refused")
			}
		})
	}
}

func TestCancelled(t *testing.T) {
	x, _ := blobs(2000, 2, 3, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Cluster(ctx, x, 2000, 2, 3, Settings{Workers: 2}); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestStartSeed(t *testing.T) {
	if StartSeed(42, 0) != 42 {
		t.Fatal("start 0 must use the run's seed")
	}
	seen := map[uint64]bool{}
	for seed := range uint64(10) {
		for r := range 10 {
			s := StartSeed(seed, r)
			if seen[s] {
				t.Fatalf("StartSeed(%d, %d) = %d repeats an earlier seed", seed, r, s)
			}
			seen[s] = true
		}
	}
}

func TestMemberships(t *testing.T) {
	x := []float64{0, 0.2, 5, 5.2, 2.5}
	r, err := Cluster(context.Background(), x, 5, 1, 2, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, 10)
	if err := r.OneHot(w); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if w[i*2+int(r.Labels[i])] != 1 || w[i*2+1-int(r.Labels[i])] != 0 {
			t.Fatalf("one-hot row %d = %v, label %d", i, w[i*2:i*2+2], r.Labels[i])
		}
	}
	for _, tc := range []struct {
		name  string
		beta  float64
		check func(i int, row []float64) bool
	}{
		{name: "beta 0 is uniform", beta: 0, check: func(_ int, row []float64) bool { return row[0] == 0.5 && row[1] == 0.5 }},
		{name: "large beta is one-hot", beta: 1e6, check: func(i int, row []float64) bool {
			return i == 4 || row[r.Labels[i]] == 1
		}},
		{name: "beta 1 matches the formula", beta: 1, check: func(i int, row []float64) bool {
			d0 := (x[i] - r.Centers[0]) * (x[i] - r.Centers[0])
			d1 := (x[i] - r.Centers[1]) * (x[i] - r.Centers[1])
			want := math.Exp(-d0) / (math.Exp(-d0) + math.Exp(-d1))
			return math.Abs(row[0]-want) < 1e-15 && math.Abs(row[0]+row[1]-1) < 1e-15
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := r.Soft(w, x, tc.beta); err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				if !tc.check(i, w[i*2:i*2+2]) {
					t.Fatalf("row %d = %v", i, w[i*2:i*2+2])
				}
			}
		})
	}
	if err := r.OneHot(w[:9]); err == nil {
		t.Fatal("OneHot accepted a short matrix")
	}
	if err := r.Soft(w, x, -1); err == nil {
		t.Fatal("Soft accepted beta < 0")
	}
	if err := r.Soft(w, x[:4], 1); err == nil {
		t.Fatal("Soft accepted short features")
	}
}

func TestSoftSkipsEmptyClusters(t *testing.T) {
	x := []float64{1, 1, 1}
	r, err := Cluster(context.Background(), x, 3, 1, 3, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, 9)
	for _, beta := range []float64{0, 1} {
		if err := r.Soft(w, x, beta); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			for c := range 3 {
				want := 0.0
				if r.Sizes[c] > 0 {
					want = 1
				}
				if w[i*3+c] != want {
					t.Fatalf("beta %g: w = %v with sizes %v", beta, w, r.Sizes)
				}
			}
		}
	}
}

func BenchmarkCluster(b *testing.B) {
	const n, p, k = 20000, 16, 10
	x := normals(n*p, 1, 2)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var iters int
			for b.Loop() {
				r, err := Cluster(context.Background(), x, n, p, k, Settings{MaxIter: 20, Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				iters += r.Iterations
			}
			// One Lloyd iteration computes n·k distances of p features;
			// the time also covers the seeding, about 1 + ln k more
			// distance passes over n rows per center.
			b.ReportMetric(float64(iters)*n*k*p/b.Elapsed().Seconds(), "nkp/s")
		})
	}
}

// TestGather checks that a sample's rows come out in the sample's order,
// found in x through pos or not, whatever order gather reads them in.
func TestGather(t *testing.T) {
	const n, p = 50, 3
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, n*p)
	for i := range x {
		x[i] = float64(i)
	}
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	rng.Shuffle(n, func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
	rows := []int{0, 3, 4, 17, 31, 49}
	for _, pos := range [][]int32{nil, perm} {
		got := gather(x, p, rows, pos)
		for s, r := range rows {
			i := r
			if pos != nil {
				i = int(pos[r])
			}
			if !slices.Equal(got[s*p:(s+1)*p], x[i*p:(i+1)*p]) {
				t.Fatalf("pos %v: sample row %d (input row %d) = %v, want row %d of x", pos != nil, s, r, got[s*p:(s+1)*p], i)
			}
		}
	}
}
