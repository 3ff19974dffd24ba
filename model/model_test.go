package model

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/internal/negexp"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
)

var update = flag.Bool("update", false, "rewrite the golden model file in testdata")

// blobs returns n rows of p features around c centres, seeded.
func blobs(n, p, c int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float64, n*p)
	for i := range n {
		for q := range p {
			x[i*p+q] = float64((i%c)*4*(q%2)) + rng.NormFloat64()
		}
	}
	return x
}

func names(p int) []string {
	s := make([]string, p)
	for q := range s {
		s[q] = "f" + string(rune('a'+q))
	}
	return s
}

// identityModel builds the kNN model of the rows x, standardized, with W
// the identity (k = n), so that the b = Wᵀp_x of a row is p_x itself.
func identityModel(t testing.TB, x []float64, n, p int, opt graph.KNNOptions, leaf int) (*Model, *graph.CSR, []int32) {
	t.Helper()
	raw := append([]float64(nil), x...)
	mean, std := tile.Moments(raw, n, p)
	tile.Standardize(x, n, p)
	var order []int32
	if leaf == 0 {
		leaf = n // one leaf: Build keeps the rows' order
	} else {
		var err error
		if order, err = graph.Partition(context.Background(), x, n, p, leaf, 1, 1); err != nil {
			t.Fatal(err)
		}
		opt.Leaf = leaf
	}
	g, err := graph.KNN(context.Background(), x, n, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, n*n)
	for i := range n {
		w[i*n+i] = 1
	}
	meta, a, err := Build(context.Background(), Training{X: x, N: n, P: p, W: w, K: n, Names: names(p),
		Mean: mean, Std: std, Graph: g, Neighbors: opt.Neighbors, Weights: opt.Weights, Scale: 2.5, Leaf: leaf})
	if err != nil {
		t.Fatal(err)
	}
	return &Model{meta: *meta, a: *a}, g, order
}

// TestAffinityOfTrainingRows checks that the affinity row predict builds
// for a training row is the row of P, entry by entry: the exact graph's
// lists, reverse edges and self-tuning scales are reproduced.
func TestAffinityOfTrainingRows(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n, p, m int
		weights graph.Weights
	}{
		{"self-tuning", 300, 3, 10, graph.SelfTuning},
		{"connectivity", 200, 2, 7, graph.Connectivity},
		{"duplicates", 120, 2, 5, graph.SelfTuning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, p := tc.n, tc.p
			x := blobs(n, p, 3, 1)
			if tc.name == "duplicates" {
				for i := 1; i < n; i += 2 {
					copy(x[i*p:(i+1)*p], x[(i-1)*p:i*p])
				}
			}
			raw := append([]float64(nil), x...)
			m, g, _ := identityModel(t, x, n, p, graph.KNNOptions{Neighbors: tc.m, Weights: tc.weights, Method: graph.Exact}, 0)
			sc := m.newScratch()
			for i := range n {
				m.standardize(sc.x, raw[i*p:(i+1)*p])
				clear(sc.b)
				m.neighbours(sc, graph.Exact, 0)
				m.knnRow(sc)
				// sc.b is p_x in the model's row order; compare with P's row i.
				want := make([]float64, n)
				for e := g.RowPtr[i]; e < g.RowPtr[i+1]; e++ {
					want[g.Col[e]] = 2.5 * g.Val[e]
				}
				got := sc.b
				for j := range n {
					if math.Abs(got[j]-want[j]) > 1e-12*(1+want[j]) {
						if d := tile.SqDist(x[i*p:(i+1)*p], x[j*p:(j+1)*p]); tc.name == "duplicates" && (d == m.a.Reach[j] || d == m.a.Reach[i]) {
							continue // copies tied at the M-th distance: which of them the graph lists, predict cannot tell
						}
						t.Fatalf("row %d: p_x[%d] = %v, P = %v", i, j, got[j], want[j])
					}
				}
			}
		})
	}
}

// TestGaussianRow checks the Gaussian affinity row against the kernel.
func TestGaussianRow(t *testing.T) {
	n, p, gamma := 50, 3, 0.3
	x := blobs(n, p, 2, 2)
	w := make([]float64, n*n)
	for i := range n {
		w[i*n+i] = 1
	}
	meta, a, err := Build(context.Background(), Training{X: x, N: n, P: p, W: w, K: n, Names: names(p), Gamma: gamma})
	if err != nil {
		t.Fatal(err)
	}
	m := &Model{meta: *meta, a: *a}
	sc := m.newScratch()
	y := []float64{0.5, -1, 2}
	m.standardize(sc.x, y)
	m.gaussianRow(sc)
	for j := range n {
		if want := negexp.Of(gamma * tile.SqDist(y, x[j*p:(j+1)*p])); sc.b[j] != want {
			t.Fatalf("entry %d: %v, want %v", j, sc.b[j], want)
		}
	}
}

// TestApproximateSearch checks the leaf search against the exact one: on
// training rows it finds most of the exact lists, and with every leaf
// probed all of them.
func TestApproximateSearch(t *testing.T) {
	n, p := 2000, 4
	x := blobs(n, p, 5, 3)
	raw := append([]float64(nil), x...)
	m, _, _ := identityModel(t, x, n, p, graph.KNNOptions{Neighbors: 10, Weights: graph.SelfTuning, Method: graph.Approximate, Sample: -1}, 100)
	for _, tc := range []struct {
		probes int
		least  float64
	}{{3, 0.9}, {20, 1}} {
		r, s, err := m.Recall(context.Background(), raw, n, 200, 1, Options{Search: graph.Approximate, Probes: tc.probes})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d probes: recall %.4f on %d rows", tc.probes, r, s)
		if s != 200 || r < tc.least {
			t.Fatalf("%d probes: recall %.4f on %d rows, want >= %v on 200", tc.probes, r, s, tc.least)
		}
	}
}

// TestTune checks that the approximate search's probes are doubled until
// the sampled recall of new rows reaches the target (the search did not
// adapt its effort before, issue 34), or every leaf is scanned, that the
// recall it reports is that of the probes chosen, and that neither
// depends on the workers.
func TestTune(t *testing.T) {
	n, p := 3000, 12 // 12 features, of which 6 separate 5 centres: a search that needs effort
	x := blobs(n, p, 5, 3)
	m, _, _ := identityModel(t, x, n, p, graph.KNNOptions{Neighbors: 10, Weights: graph.SelfTuning, Method: graph.Approximate, Sample: -1}, 100)
	rows := 700
	y := blobs(rows, p, 5, 9)
	for _, tc := range []struct {
		target float64
		probes int // the first probes
	}{{0.9, 1}, {0.99, 1}, {1, 2}, {0.5, 4}} {
		var first []Tuned
		for _, workers := range []int{1, 3} {
			var steps []Tuned
			opt, got, err := m.Tune(context.Background(), y, rows, 300, 5, tc.target, Options{Search: graph.Approximate, Probes: tc.probes, Workers: workers},
				func(t Tuned) { steps = append(steps, t) })
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("target %v from %d probes, %d workers: %+v", tc.target, tc.probes, workers, steps)
			last := steps[len(steps)-1]
			if last != got || opt.Probes != got.Probes || got.Rows != 300 {
				t.Fatalf("returned %+v (probes %d), last step %+v", got, opt.Probes, last)
			}
			if got.Recall < tc.target && got.Probes != m.meta.Leaves() {
				t.Fatalf("stopped at %+v below the target %v with %d leaves", got, tc.target, m.meta.Leaves())
			}
			for e, s := range steps {
				want := min(tc.probes<<e, m.meta.Leaves())
				if s.Probes != want || e < len(steps)-1 && s.Recall >= tc.target {
					t.Fatalf("step %d: %+v, want %d probes and a recall below %v but at the last", e, s, want, tc.target)
				}
			}
			if first == nil {
				first = steps
			} else if !slices.Equal(first, steps) {
				t.Fatalf("%d workers: %+v, 1 worker: %+v", workers, steps, first)
			}
		}
		if tc.target >= 0.99 && len(first) < 2 {
			t.Fatalf("target %v reached at %d probes: the case does not test the doubling", tc.target, tc.probes)
		}
	}
	// An exact search needs no tuning; no sample measures nothing.
	if _, got, err := m.Tune(context.Background(), y, rows, 300, 5, 0.99, Options{Search: graph.Exact}, nil); err != nil || got.Recall != 1 || got.Rows != 0 {
		t.Fatalf("exact search: %+v, %v", got, err)
	}
	if _, got, err := m.Tune(context.Background(), y, rows, 0, 5, 0.99, Options{Search: graph.Approximate, Probes: 2}, nil); err != nil || !math.IsNaN(got.Recall) || got.Probes != 2 {
		t.Fatalf("no sample: %+v, %v", got, err)
	}
}

// TestFarValues checks that a value whose standardized squared distances
// would overflow is refused as a ValueError naming its column (it gave NaN
// memberships, issue 34 item 4), and one just inside gets finite ones.
func TestFarValues(t *testing.T) {
	n, p := 400, 3
	x := blobs(n, p, 2, 4)
	m, _, _ := identityModel(t, x, n, p, graph.KNNOptions{Neighbors: 8, Weights: graph.SelfTuning, Method: graph.Exact}, 0)
	limit := tile.MaxFeature(p) * m.a.Std[1]
	for _, tc := range []struct {
		v   float64
		bad bool
	}{{1e155, true}, {-math.MaxFloat64, true}, {math.Inf(1), true}, {limit * 0.99, false}, {-limit * 0.99, false}, {1e10, false}} {
		y := []float64{0.5, tc.v, -0.2}
		w := make([]float64, n)
		err := m.Predict(context.Background(), y, 1, w, Options{Search: graph.Exact})
		var ve *ValueError
		switch {
		case tc.bad && (!errors.As(err, &ve) || ve.Feature != 1 || ve.Name != "fb"):
			t.Fatalf("%g: %v, want a ValueError of column 1 (fb)", tc.v, err)
		case !tc.bad && err != nil:
			t.Fatalf("%g: %v", tc.v, err)
		case !tc.bad:
			var sum float64
			for _, v := range w {
				if !(v >= 0) {
					t.Fatalf("%g: memberships %v", tc.v, w)
				}
				sum += v
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Fatalf("%g: memberships sum to %v", tc.v, sum)
			}
		}
	}
}

// goldenModel builds the model file of a small fixed data set and W.
func goldenModel(t testing.TB) []byte {
	n, p, k := 40, 2, 3
	x := blobs(n, p, 3, 5)
	mean, std := tile.Moments(x, n, p)
	tile.Standardize(x, n, p)
	g, err := graph.KNN(context.Background(), x, n, p, graph.KNNOptions{Neighbors: 6, Weights: graph.SelfTuning, Method: graph.Exact})
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, n*k)
	for i := range n {
		w[i*k+i%k] = 0.75
		w[i*k+(i+1)%k] = 0.25
	}
	meta, a, err := Build(context.Background(), Training{X: x, N: n, P: p, W: w, K: k, Names: names(p), Mean: mean, Std: std,
		Graph: g, Neighbors: 6, Weights: graph.SelfTuning, Scale: 3, Input: "blobs", Method: "rowcd"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := encode(&b, meta, a); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const goldenFile = "testdata/small.model.ssnmf"

// TestGolden compares the model file of a fixed input with the one in
// testdata (-update rewrites it), and checks that it opens and predicts.
func TestGolden(t *testing.T) {
	got := goldenModel(t)
	if *update {
		if err := os.WriteFile(goldenFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the model file differs from %s (%d and %d bytes); if the format changed on purpose, raise Version and run go test ./model -run TestGolden -update", goldenFile, len(got), len(want))
	}
	m, err := Open(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	w := make([]float64, 2*m.K())
	if err := m.Predict(context.Background(), []float64{0, 0, 4, 1}, 2, w, Options{}); err != nil {
		t.Fatal(err)
	}
	for r := range 2 {
		var sum float64
		for _, v := range w[r*m.K() : (r+1)*m.K()] {
			sum += v
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("row %d: memberships %v sum to %v", r, w[r*m.K():(r+1)*m.K()], sum)
		}
	}
}

// TestSaveReplaces checks that Save replaces a model directory and
// refuses a directory that holds anything else.
func TestSaveReplaces(t *testing.T) {
	b := goldenModel(t)
	meta, a, err := decode(aligned(b))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "m")
	for range 2 {
		if err := Save(dir, meta, a); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil || !bytes.Equal(got, b) {
		t.Fatalf("the saved model differs (%v)", err)
	}
	if es, _ := os.ReadDir(filepath.Dir(dir)); len(es) != 1 {
		t.Fatalf("Save left %d entries beside the model", len(es))
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "data.csv"), []byte("x\n"), 0o644)
	if err := Save(other, meta, a); err == nil {
		t.Fatal("Save replaced a directory that is not a model's")
	}
}

// aligned returns b copied into 8-byte aligned memory, as a mapping is.
func aligned(b []byte) []byte {
	out := store.AsBytes(make([]uint64, (len(b)+7)/8))[:len(b)]
	copy(out, b)
	return out
}

// FuzzDecode feeds damaged model files to the reader: it must refuse
// them with an error, never panic, and a file it accepts must predict a
// row without panicking.
func FuzzDecode(f *testing.F) {
	good := goldenModel(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:200])
	for _, at := range []int{8, 12, 20, 40, 300, len(good) - 3} {
		bad := bytes.Clone(good)
		bad[at] ^= 0xff
		f.Add(bad)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		meta, a, err := decode(aligned(b))
		if err != nil {
			return
		}
		m := &Model{meta: *meta, a: *a}
		x := make([]float64, meta.P)
		w := make([]float64, meta.K)
		m.Predict(context.Background(), x, 1, w, Options{Search: graph.Approximate, Probes: 2})
	})
}

// BenchmarkPredict measures the rows a second of Predict against a model
// of 20,000 training rows (p = 8, k = 10) by each search.
func BenchmarkPredict(b *testing.B) {
	n, p, k := 20000, 8, 10
	x := blobs(n, p, k, 9)
	raw := append([]float64(nil), x...)
	mean, std := tile.Moments(x, n, p)
	tile.Standardize(x, n, p)
	order, err := graph.Partition(context.Background(), x, n, p, graph.DefaultLeaf, 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	g, err := graph.KNN(context.Background(), x, n, p, graph.KNNOptions{Weights: graph.SelfTuning, Method: graph.Approximate, Sample: -1})
	if err != nil {
		b.Fatal(err)
	}
	w := make([]float64, n*k)
	for q, i := range order {
		w[q*k+int(i)%k] = 1
	}
	meta, a, err := Build(context.Background(), Training{X: x, N: n, P: p, W: w, K: k, Names: names(p), Mean: mean, Std: std,
		Graph: g, Neighbors: graph.DefaultNeighbors, Weights: graph.SelfTuning, Scale: 1, Leaf: graph.DefaultLeaf})
	if err != nil {
		b.Fatal(err)
	}
	m := &Model{meta: *meta, a: *a}
	rows := 1000
	out := make([]float64, rows*k)
	for _, s := range []graph.KNNMethod{graph.Exact, graph.Approximate} {
		b.Run(s.String(), func(b *testing.B) {
			for b.Loop() {
				if err := m.Predict(context.Background(), raw[:rows*p], rows, out, Options{Search: s}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestOpenNotAFile checks that a model directory whose model.ssnmf is not
// a regular file is refused, naming the path and what it is (a directory
// was "mmap: no such device").
func TestOpenNotAFile(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		make       func(path string) error
	}{
		{"directory", "is a directory, not a model file", func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if err := tc.make(path); err != nil {
				t.Skip(err)
			}
			m, err := Open(dir)
			if err == nil {
				m.Close()
				t.Fatal("Open accepted it")
			}
			if want := "model " + path + ": " + tc.want; !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %q, want it to begin with %q", err, want)
			}
		})
	}
}
