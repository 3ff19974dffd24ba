package score

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

const tol = 1e-12

// ---------------------------------------------------------------------------
// Independent reference implementations. None of them uses the contingency
// table, the relabeling, or the assignment code of the package.

// naiveARI computes the adjusted Rand index by examining all n(n-1)/2 pairs
// of points and classifying each as together/apart in truth and in pred, then
// applying the pair-confusion form of the index,
//
//	ARI = 2(tp·tn − fn·fp) / ((tp+fn)(fn+tn) + (tp+fp)(fp+tn)),
//
// which is 1 by convention when fn = fp = 0 (identical partitions).
func naiveARI(truth, pred []int) float64 {
	var tp, fp, fn, tn float64
	for i := range truth {
		for j := i + 1; j < len(truth); j++ {
			sameT := truth[i] == truth[j]
			sameP := pred[i] == pred[j]
			switch {
			case sameT && sameP:
				tp++
			case !sameT && sameP:
				fp++
			case sameT && !sameP:
				fn++
			default:
				tn++
			}
		}
	}
	if fn == 0 && fp == 0 {
		return 1
	}
	return 2 * (tp*tn - fn*fp) / ((tp+fn)*(fn+tn) + (tp+fp)*(fp+tn))
}

// directNMI computes NMI from the empirical distributions with the textbook
// formulas H(X) = −Σ p log p and I(T;C) = Σ p(t,c) log(p(t,c)/(p(t)p(c))).
func directNMI(truth, pred []int) float64 {
	n := float64(len(truth))
	ct := map[int]float64{}
	cc := map[int]float64{}
	ctc := map[[2]int]float64{}
	for i := range truth {
		ct[truth[i]]++
		cc[pred[i]]++
		ctc[[2]int{truth[i], pred[i]}]++
	}
	h := func(counts map[int]float64) float64 {
		s := 0.0
		for _, c := range counts {
			p := c / n
			s -= p * math.Log(p)
		}
		return s
	}
	mi := 0.0
	for k, c := range ctc {
		p := c / n
		mi += p * math.Log(p/((ct[k[0]]/n)*(cc[k[1]]/n)))
	}
	ht, hc := h(ct), h(cc)
	if ht == 0 && hc == 0 {
		return 1
	}
	return mi / ((ht + hc) / 2)
}

// permutations calls f with every permutation of 0..m-1.
func permutations(m int, f func(p []int)) {
	p := make([]int, m)
	used := make([]bool, m)
	var rec func(pos int)
	rec = func(pos int) {
		if pos == m {
			f(p)
			return
		}
		for v := range m {
			if !used[v] {
				used[v] = true
				p[pos] = v
				rec(pos + 1)
				used[v] = false
			}
		}
	}
	rec(0)
}

// distinct returns the sorted distinct values of labels.
func distinct(labels []int) []int {
	s := slices.Clone(labels)
	slices.Sort(s)
	return slices.Compact(s)
}

// bruteAccuracy tries every one-to-one map of classes to clusters: with
// m = max(#classes, #clusters), class i maps to cluster p[i] for each
// permutation p of 0..m-1, indices beyond the real ones meaning "unmatched".
func bruteAccuracy(truth, pred []int) float64 {
	classes, clusters := distinct(truth), distinct(pred)
	joint := make([][]int, len(classes)) // joint[i][j] = points in classes[i] and clusters[j]
	for i := range joint {
		joint[i] = make([]int, len(clusters))
	}
	for x := range truth {
		i, _ := slices.BinarySearch(classes, truth[x])
		j, _ := slices.BinarySearch(clusters, pred[x])
		joint[i][j]++
	}
	m := max(len(classes), len(clusters))
	best := 0
	permutations(m, func(p []int) {
		hits := 0
		for i := range classes {
			if p[i] < len(clusters) {
				hits += joint[i][p[i]]
			}
		}
		best = max(best, hits)
	})
	return float64(best) / float64(len(truth))
}

// bruteAssign returns the minimum total cost of a permutation of the m×m
// matrix cost.
func bruteAssign(cost []int64, m int) int64 {
	best := int64(math.MaxInt64)
	permutations(m, func(p []int) {
		var s int64
		for i, j := range p {
			s += cost[i*m+j]
		}
		best = min(best, s)
	})
	return best
}

// dpAssign returns the minimum total cost of a permutation of the m×m matrix
// cost by dynamic programming over subsets of columns, O(2^m·m).
func dpAssign(cost []int64, m int) int64 {
	const inf = int64(math.MaxInt64)
	dp := make([]int64, 1<<m)
	for s := range dp {
		dp[s] = inf
	}
	dp[0] = 0
	for s := range dp {
		if dp[s] == inf {
			continue
		}
		i := popcount(s) // next row to assign
		if i == m {
			continue
		}
		for j := range m {
			if s&(1<<j) == 0 {
				dp[s|1<<j] = min(dp[s|1<<j], dp[s]+cost[i*m+j])
			}
		}
	}
	return dp[len(dp)-1]
}

func popcount(s int) int {
	c := 0
	for ; s != 0; s &= s - 1 {
		c++
	}
	return c
}

// randomLabels returns n labels drawn from c distinct, non-contiguous
// values, which need not all occur.
func randomLabels(rng *rand.Rand, n, c int) []int {
	values := make([]int, c)
	for i := range values {
		values[i] = 3*i + rng.IntN(3) + 5
	}
	out := make([]int, n)
	for i := range out {
		out[i] = values[rng.IntN(c)]
	}
	return out
}

// scores lists the package's scores, for the tests that treat them alike.
var scores = []struct {
	name      string
	fn        func(truth, pred []int) (float64, error)
	symmetric bool // the same score with truth and pred swapped
}{
	{"ARI", ARI, true},
	{"NMI", NMI, true},
	{"Accuracy", Accuracy, false},
}

// bothTables returns the dense and the sparse contingency tables of truth
// and pred.
func bothTables(t *testing.T, truth, pred []int) (dense, sparse *contingency) {
	t.Helper()
	dense, err := newContingency(truth, pred, math.MaxInt)
	if err != nil {
		t.Fatal(err)
	}
	sparse, err = newContingency(truth, pred, 0)
	if err != nil {
		t.Fatal(err)
	}
	if dense.dense == nil || sparse.sparse == nil {
		t.Fatal("wrong table representation")
	}
	return dense, sparse
}

// randomPairs calls f with trials random pairs of labelings of the same
// points, drawn from the PCG stream seeded with seed1 and seed2: for each,
// 1 to maxN points, truth from 1 to maxClasses values and pred from 1 to
// maxClusters (see randomLabels).
func randomPairs(seed1, seed2 uint64, trials, maxN, maxClasses, maxClusters int, f func(trial int, truth, pred []int)) {
	rng := rand.New(rand.NewPCG(seed1, seed2))
	for trial := range trials {
		n := 1 + rng.IntN(maxN)
		truth := randomLabels(rng, n, 1+rng.IntN(maxClasses))
		pred := randomLabels(rng, n, 1+rng.IntN(maxClusters))
		f(trial, truth, pred)
	}
}

// ---------------------------------------------------------------------------
// Hand-verified values.

func TestKnownValues(t *testing.T) {
	ln2, ln3 := math.Log(2), math.Log(3)
	tests := []struct {
		name        string
		truth, pred []int
		ari         float64
		nmi         float64
		acc         float64
	}{
		{
			name:  "identical",
			truth: []int{0, 0, 1, 1, 2, 2},
			pred:  []int{0, 0, 1, 1, 2, 2},
			ari:   1, nmi: 1, acc: 1,
		},
		{
			name:  "permuted labels",
			truth: []int{0, 0, 1, 1, 2, 2},
			pred:  []int{5, 5, 9, 9, 3, 3},
			ari:   1, nmi: 1, acc: 1,
		},
		{
			// Contingency table: class 0 -> clusters {0:2, 1:1}, class 1 ->
			// clusters {1:1, 2:2}.
			// ARI: Σ C(n_ij,2) = 1+0+0+1 = 2; Σ C(a_i,2) = 3+3 = 6;
			// Σ C(b_j,2) = 1+1+1 = 3; C(6,2) = 15; E = 6·3/15 = 1.2;
			// max = (6+3)/2 = 4.5; ARI = (2−1.2)/(4.5−1.2) = 0.8/3.3
			// = 8/33 = 0.242424...
			// NMI: H(T) = ln 2, H(C) = ln 3; the two cells of size 2
			// contribute (2/6)·ln(6·2/(3·2)) = (1/3) ln 2 each and the
			// cells of size 1 contribute (1/6)·ln(6/(3·2)) = 0, so
			// I = (2/3) ln 2 and NMI = (2/3) ln 2 / ((ln 2 + ln 3)/2)
			// = 0.5158037429...
			// Accuracy: class 0 -> cluster 0 and class 1 -> cluster 2
			// place 2+2 points correctly: 4/6.
			name:  "textbook",
			truth: []int{0, 0, 0, 1, 1, 1},
			pred:  []int{0, 0, 1, 1, 2, 2},
			ari:   8.0 / 33,
			nmi:   (2.0 / 3 * ln2) / ((ln2 + ln3) / 2),
			acc:   4.0 / 6,
		},
		{
			name:  "single cluster both",
			truth: []int{3, 3, 3, 3},
			pred:  []int{8, 8, 8, 8},
			ari:   1, nmi: 1, acc: 1,
		},
		{
			name:  "all singletons both",
			truth: []int{0, 1, 2, 3},
			pred:  []int{7, 4, 9, 1},
			ari:   1, nmi: 1, acc: 1,
		},
		{
			name:  "one point",
			truth: []int{5},
			pred:  []int{2},
			ari:   1, nmi: 1, acc: 1,
		},
		{
			// Σ C(n_ij,2) = 2 = E = 6·2/6; ARI = 0. H(T) = 0, so I = 0.
			name:  "truth single cluster",
			truth: []int{0, 0, 0, 0},
			pred:  []int{0, 0, 1, 1},
			ari:   0, nmi: 0, acc: 0.5,
		},
		{
			name:  "pred single cluster",
			truth: []int{0, 0, 1, 1},
			pred:  []int{0, 0, 0, 0},
			ari:   0, nmi: 0, acc: 0.5,
		},
		{
			// Σ C(a_i,2) = 0, so E = 0 = Σ C(n_ij,2); ARI = 0.
			name:  "singletons against one cluster",
			truth: []int{0, 1, 2},
			pred:  []int{4, 4, 4},
			ari:   0, nmi: 0, acc: 1.0 / 3,
		},
		{
			// Every cluster splits a class in half.
			// ARI: Σ C(n_ij,2) = 4; Σ C(a_i,2) = 12; Σ C(b_j,2) = 4;
			// C(8,2) = 28; E = 48/28 = 12/7; max = 8;
			// ARI = (4 − 12/7)/(8 − 12/7) = 16/44 = 4/11.
			// NMI: I = 4·(2/8)·ln(8·2/(4·2)) = ln 2; H(T) = ln 2,
			// H(C) = ln 4; NMI = ln 2 / (1.5 ln 2) = 2/3.
			// Accuracy: two clusters matched, 2 points each: 4/8.
			name:  "more clusters than classes",
			truth: []int{0, 0, 0, 0, 1, 1, 1, 1},
			pred:  []int{0, 0, 1, 1, 2, 2, 3, 3},
			ari:   4.0 / 11, nmi: 2.0 / 3, acc: 0.5,
		},
		{
			// The transpose of the previous case; ARI and NMI are symmetric.
			name:  "fewer clusters than classes",
			truth: []int{0, 0, 1, 1, 2, 2, 3, 3},
			pred:  []int{0, 0, 0, 0, 1, 1, 1, 1},
			ari:   4.0 / 11, nmi: 2.0 / 3, acc: 0.5,
		},
		{
			// Σ C(n_ij,2) = 0; E = 2·2/6 = 2/3; max = 2;
			// ARI = (−2/3)/(4/3) = −1/2. The partitions are independent,
			// so I = 0.
			name:  "orthogonal partitions",
			truth: []int{0, 0, 1, 1},
			pred:  []int{0, 1, 0, 1},
			ari:   -0.5, nmi: 0, acc: 0.5,
		},
		{
			name:  "large label values",
			truth: []int{1 << 40, 1 << 40, 1 << 40, 7, 7, 7},
			pred:  []int{math.MaxInt, math.MaxInt, 1 << 50, 1 << 50, 0, 0},
			ari:   8.0 / 33,
			nmi:   (2.0 / 3 * ln2) / ((ln2 + ln3) / 2),
			acc:   4.0 / 6,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ari, err := ARI(tc.truth, tc.pred)
			if err != nil {
				t.Fatalf("ARI: %v", err)
			}
			if math.Abs(ari-tc.ari) > tol {
				t.Errorf("ARI = %.15g, want %.15g", ari, tc.ari)
			}
			nmi, err := NMI(tc.truth, tc.pred)
			if err != nil {
				t.Fatalf("NMI: %v", err)
			}
			if math.Abs(nmi-tc.nmi) > tol {
				t.Errorf("NMI = %.15g, want %.15g", nmi, tc.nmi)
			}
			acc, err := Accuracy(tc.truth, tc.pred)
			if err != nil {
				t.Fatalf("Accuracy: %v", err)
			}
			if math.Abs(acc-tc.acc) > tol {
				t.Errorf("Accuracy = %.15g, want %.15g", acc, tc.acc)
			}
			// The independent references must agree with the hand values
			// too, which checks the references themselves.
			if got := naiveARI(tc.truth, tc.pred); math.Abs(got-tc.ari) > tol {
				t.Errorf("naiveARI = %.15g, want %.15g", got, tc.ari)
			}
			if got := directNMI(tc.truth, tc.pred); math.Abs(got-tc.nmi) > tol {
				t.Errorf("directNMI = %.15g, want %.15g", got, tc.nmi)
			}
			if got := bruteAccuracy(tc.truth, tc.pred); math.Abs(got-tc.acc) > tol {
				t.Errorf("bruteAccuracy = %.15g, want %.15g", got, tc.acc)
			}
		})
	}
}

func TestTextbookDecimals(t *testing.T) {
	truth := []int{0, 0, 0, 1, 1, 1}
	pred := []int{0, 0, 1, 1, 2, 2}
	ari, _ := ARI(truth, pred)
	nmi, _ := NMI(truth, pred)
	if math.Abs(ari-0.24242424242424243) > tol {
		t.Errorf("ARI = %.15g, want 0.242424242424242", ari)
	}
	if math.Abs(nmi-0.5158037429793888) > 1e-10 {
		t.Errorf("NMI = %.15g, want 0.5158037429...", nmi)
	}
}

// ---------------------------------------------------------------------------
// Random comparisons against the references.

func TestAgainstReferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		n := 1 + rng.IntN(60)
		c := 1 + rng.IntN(6)
		k := 1 + rng.IntN(6)
		truth := randomLabels(rng, n, c)
		pred := randomLabels(rng, n, k)
		if trial%4 == 0 {
			// Correlated partitions: pred mostly follows truth, through
			// a fixed map onto labels pred already uses.
			orig := slices.Clone(pred)
			for i := range pred {
				if rng.IntN(4) != 0 {
					pred[i] = orig[truth[i]%n]
				}
			}
		}
		ari, err := ARI(truth, pred)
		if err != nil {
			t.Fatal(err)
		}
		if want := naiveARI(truth, pred); math.Abs(ari-want) > tol {
			t.Fatalf("trial %d: ARI = %.17g, naive = %.17g\ntruth=%v\npred=%v", trial, ari, want, truth, pred)
		}
		nmi, err := NMI(truth, pred)
		if err != nil {
			t.Fatal(err)
		}
		if want := directNMI(truth, pred); math.Abs(nmi-want) > tol {
			t.Fatalf("trial %d: NMI = %.17g, direct = %.17g\ntruth=%v\npred=%v", trial, nmi, want, truth, pred)
		}
		acc, err := Accuracy(truth, pred)
		if err != nil {
			t.Fatal(err)
		}
		if want := bruteAccuracy(truth, pred); acc != want {
			t.Fatalf("trial %d: Accuracy = %v, brute force = %v\ntruth=%v\npred=%v", trial, acc, want, truth, pred)
		}
	}
}

func TestAgainstReferencesManyLabels(t *testing.T) {
	randomPairs(3, 4, 200, 400, 30, 60, func(trial int, truth, pred []int) {
		ari, _ := ARI(truth, pred)
		if want := naiveARI(truth, pred); math.Abs(ari-want) > tol {
			t.Fatalf("trial %d: ARI = %.17g, naive = %.17g", trial, ari, want)
		}
		nmi, _ := NMI(truth, pred)
		if want := directNMI(truth, pred); math.Abs(nmi-want) > tol {
			t.Fatalf("trial %d: NMI = %.17g, direct = %.17g", trial, nmi, want)
		}
	})
}

// TestInvariance checks that the scores ignore the names of the labels and,
// for ARI and NMI, which partition is called the truth.
func TestInvariance(t *testing.T) {
	randomPairs(5, 6, 200, 200, 8, 8, func(_ int, truth, pred []int) {
		// Rename through an injective map onto huge values, which also
		// exercises the map-based relabeling.
		rename := func(ls []int) []int {
			out := make([]int, len(ls))
			for i, l := range ls {
				out[i] = math.MaxInt - 1000003*l
			}
			return out
		}
		rt, rp := rename(truth), rename(pred)
		for _, f := range scores {
			a, _ := f.fn(truth, pred)
			b, _ := f.fn(rt, rp)
			if math.Abs(a-b) > tol {
				t.Fatalf("%s changed under renaming: %v vs %v", f.name, a, b)
			}
			if f.symmetric {
				c, _ := f.fn(pred, truth)
				if math.Abs(a-c) > tol {
					t.Fatalf("%s not symmetric: %v vs %v", f.name, a, c)
				}
			}
		}
	})
}

// TestSparseTable checks that the sparse contingency table, used when the
// dense one would be too large, gives the same scores as the dense one.
func TestSparseTable(t *testing.T) {
	randomPairs(7, 8, 300, 300, 20, 20, func(_ int, truth, pred []int) {
		dense, sparse := bothTables(t, truth, pred)
		if a, b := dense.ari(), sparse.ari(); math.Abs(a-b) > tol {
			t.Fatalf("ARI dense %v, sparse %v", a, b)
		}
		if a, b := dense.nmi(), sparse.nmi(); math.Abs(a-b) > tol {
			t.Fatalf("NMI dense %v, sparse %v", a, b)
		}
		a, _ := dense.accuracy()
		b, _ := sparse.accuracy()
		if a != b {
			t.Fatalf("Accuracy dense %v, sparse %v", a, b)
		}
	})
}

// TestSparseTableSameBits checks that scores from the sparse table do not
// depend on the order a map gives its cells: the same bits as the dense
// table, every time.
func TestSparseTableSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	truth := randomLabels(rng, 3000, 300)
	pred := randomLabels(rng, 3000, 300)
	dense, sparse := bothTables(t, truth, pred)
	for range 10 {
		if a, b := dense.nmi(), sparse.nmi(); a != b {
			t.Fatalf("NMI dense %v, sparse %v", a, b)
		}
		if a, b := dense.ari(), sparse.ari(); a != b {
			t.Fatalf("ARI dense %v, sparse %v", a, b)
		}
	}
}

// TestManySingletons uses more distinct labels than fit a dense table or the
// matching step.
func TestManySingletons(t *testing.T) {
	const n = 5000
	truth := make([]int, n)
	pred := make([]int, n)
	same := make([]int, n)
	for i := range pred {
		truth[i] = i / 2 // 2500 classes of two points
		pred[i] = i      // 5000 singleton clusters
		same[i] = n - i
	}
	// Σ C(n_ij,2) = 0 and Σ C(b_j,2) = 0, so E = 0 and ARI = 0.
	if got, err := ARI(truth, pred); err != nil || got != 0 {
		t.Errorf("ARI = %v, %v; want 0, nil", got, err)
	}
	// I = H(T) = ln 2500 and H(C) = ln 5000.
	want := 2 * math.Log(2500) / (math.Log(2500) + math.Log(5000))
	if got, err := NMI(truth, pred); err != nil || math.Abs(got-want) > tol {
		t.Errorf("NMI = %v, %v; want %v, nil", got, err, want)
	}
	if got, err := ARI(pred, same); err != nil || got != 1 {
		t.Errorf("ARI of two singleton partitions = %v, %v; want 1, nil", got, err)
	}
	if got, err := NMI(pred, same); err != nil || math.Abs(got-1) > tol {
		t.Errorf("NMI of two singleton partitions = %v, %v; want 1, nil", got, err)
	}
	if _, err := Accuracy(truth, pred); err == nil || !strings.HasPrefix(err.Error(), "score: ") {
		t.Errorf("Accuracy with %d clusters: err = %v, want a score: error", n, err)
	}
	// 2500 classes is within the limit of the matching step.
	if got, err := Accuracy(truth, truth); err != nil || got != 1 {
		t.Errorf("Accuracy = %v, %v; want 1, nil", got, err)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name        string
		truth, pred []int
		wantIn      string
	}{
		{"length mismatch", []int{0, 1, 2}, []int{0, 1}, "length mismatch"},
		{"nil slices", nil, nil, "empty"},
		{"empty slices", []int{}, []int{}, "empty"},
		{"negative truth", []int{0, -1, 2}, []int{0, 1, 2}, "negative label -1 at truth[1]"},
		{"negative pred", []int{0, 1, 2}, []int{0, 1, -7}, "negative label -7 at pred[2]"},
		{"min int", []int{math.MinInt}, []int{0}, "negative label"},
	}
	for _, tc := range tests {
		for _, f := range scores {
			t.Run(tc.name+"/"+f.name, func(t *testing.T) {
				got, err := f.fn(tc.truth, tc.pred)
				if err == nil {
					t.Fatalf("got %v, nil; want an error", got)
				}
				if msg := err.Error(); !strings.HasPrefix(msg, "score: ") || !strings.Contains(msg, tc.wantIn) {
					t.Errorf("error %q does not start with \"score: \" and mention %q", msg, tc.wantIn)
				}
				if got != 0 {
					t.Errorf("value = %v alongside an error, want 0", got)
				}
			})
		}
	}
}

// TestCompare checks that Compare gives the bits of ARI, NMI and Accuracy,
// dense and sparse tables alike, and fails where Accuracy fails.
func TestCompare(t *testing.T) {
	check := func(truth, pred []int) {
		t.Helper()
		got, err := Compare(truth, pred)
		if err != nil {
			t.Fatal(err)
		}
		ari, _ := ARI(truth, pred)
		nmi, _ := NMI(truth, pred)
		acc, _ := Accuracy(truth, pred)
		if want := (Scores{ARI: ari, NMI: nmi, Accuracy: acc}); got != want {
			t.Fatalf("Compare = %+v, want %+v", got, want)
		}
	}
	randomPairs(17, 18, 300, 300, 12, 12, func(_ int, truth, pred []int) { check(truth, pred) })
	// 1200 classes and 1200 clusters: a sparse table.
	const n = 2400
	truth, pred := make([]int, n), make([]int, n)
	for i := range n {
		truth[i], pred[i] = i/2, (i+1)%n/2
	}
	if tab, _ := newContingency(truth, pred, defaultMaxDense(n)); tab.sparse == nil {
		t.Fatal("want a sparse table")
	}
	check(truth, pred)

	many := make([]int, maxAssign+1)
	for i := range many {
		many[i] = i
	}
	for _, tc := range []struct {
		name        string
		truth, pred []int
	}{
		{"length mismatch", []int{0, 1, 2}, []int{0, 1}},
		{"empty", nil, nil},
		{"negative", []int{0, -1}, []int{0, 1}},
		{"too many classes", many, make([]int, maxAssign+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compare(tc.truth, tc.pred)
			_, want := Accuracy(tc.truth, tc.pred)
			if err == nil || want == nil || err.Error() != want.Error() {
				t.Fatalf("Compare error %v, want Accuracy's %v", err, want)
			}
			if got != (Scores{}) {
				t.Errorf("Compare = %+v alongside an error, want zero", got)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// The assignment solver.

func TestAssignBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, spread := range []int64{1, 3, 100, 1e12} {
		for m := 0; m <= 6; m++ {
			for range 300 {
				cost := make([]int64, m*m)
				for i := range cost {
					cost[i] = rng.Int64N(2*spread+1) - spread
				}
				p := assign(cost, m)
				if len(p) != m {
					t.Fatalf("len(p) = %d, want %d", len(p), m)
				}
				seen := make([]bool, m)
				var total int64
				for i, j := range p {
					if j < 0 || j >= m || seen[j] {
						t.Fatalf("not a permutation: %v", p)
					}
					seen[j] = true
					total += cost[i*m+j]
				}
				if want := bruteAssign(cost, m); total != want {
					t.Fatalf("m=%d: cost %d, brute force %d\ncost=%v\np=%v", m, total, want, cost, p)
				}
			}
		}
	}
}

func TestAssignDP(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for m := 7; m <= 12; m++ {
		for range 30 {
			cost := make([]int64, m*m)
			for i := range cost {
				cost[i] = rng.Int64N(41) - 20
			}
			var total int64
			for i, j := range assign(cost, m) {
				total += cost[i*m+j]
			}
			if want := dpAssign(cost, m); total != want {
				t.Fatalf("m=%d: cost %d, subset DP %d", m, total, want)
			}
		}
	}
}

// TestMaxMatchRectangular checks the zero-padded maximization used by
// Accuracy on rectangular weight matrices against brute force over all
// injective matchings.
func TestMaxMatchRectangular(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for rows := 1; rows <= 6; rows++ {
		for cols := 1; cols <= 6; cols++ {
			for range 100 {
				w := make([]int64, rows*cols)
				for i := range w {
					w[i] = rng.Int64N(11)
				}
				total, match := maxMatch(w, rows, cols)
				// Check the matching itself.
				seen := make([]bool, cols)
				var sum int64
				matched := 0
				for i, j := range match {
					if j == -1 {
						continue
					}
					if j < 0 || j >= cols || seen[j] {
						t.Fatalf("invalid matching %v", match)
					}
					seen[j] = true
					sum += w[i*cols+j]
					matched++
				}
				if sum != total || matched != min(rows, cols) {
					t.Fatalf("matching %v has weight %d and size %d; reported %d", match, sum, matched, total)
				}
				// Brute force over injective maps.
				m := max(rows, cols)
				var want int64
				permutations(m, func(p []int) {
					var s int64
					for i := range rows {
						if p[i] < cols {
							s += w[i*cols+p[i]]
						}
					}
					want = max(want, s)
				})
				if total != want {
					t.Fatalf("%dx%d: weight %d, brute force %d\nw=%v", rows, cols, total, want, w)
				}
			}
		}
	}
}

// ---------------------------------------------------------------------------
// Benchmarks.

func BenchmarkScores(b *testing.B) {
	const n, classes, clusters = 1_000_000, 10, 100
	rng := rand.New(rand.NewPCG(15, 16))
	truth := make([]int, n)
	pred := make([]int, n)
	for i := range truth {
		truth[i] = rng.IntN(classes)
		// Each class splits into 10 clusters, with 20% noise.
		if rng.IntN(5) == 0 {
			pred[i] = rng.IntN(clusters)
		} else {
			pred[i] = truth[i]*(clusters/classes) + rng.IntN(clusters/classes)
		}
	}
	for _, f := range scores {
		b.Run(f.name, func(b *testing.B) {
			iters := 0
			for b.Loop() {
				if _, err := f.fn(truth, pred); err != nil {
					b.Fatal(err)
				}
				iters++
			}
			b.ReportMetric(float64(n)*float64(iters)/b.Elapsed().Seconds(), "points/s")
		})
	}
}
