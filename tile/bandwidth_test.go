package tile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refScale computes the scale of AutoBandwidth by brute force over all rows
// (n <= BandwidthReference, so every row is both a reference row and a
// candidate anchor): for each anchor in the given set, the m-th smallest
// positive squared distance to any row; then their median.
func refScale(x []float64, n, p int, anchors []int) float64 {
	var scales []float64
	for _, a := range anchors {
		var d2 []float64
		for j := range n {
			var d float64
			for q := range p {
				t := x[a*p+q] - x[j*p+q]
				d += float64(t * t)
			}
			if d > 0 {
				d2 = append(d2, d)
			}
		}
		if len(d2) == 0 {
			continue
		}
		slices.Sort(d2)
		scales = append(scales, d2[min(BandwidthNeighbor, len(d2))-1])
	}
	slices.Sort(scales)
	return Quantile(scales, 0.5)
}

func TestQuantile(t *testing.T) {
	s := []float64{1, 2, 4, 8, 16}
	for _, tc := range []struct {
		level, want float64
	}{
		{level: 0, want: 1},
		{level: 0.5, want: 4},
		{level: 1, want: 16},
		{level: 0.125, want: 1.5},
		{level: 0.875, want: 12},
		{level: 2, want: 16},
		{level: -1, want: 1},
	} {
		if got := Quantile(s, tc.level); got != tc.want {
			t.Errorf("Quantile(%v, %v) = %v, want %v", s, tc.level, got, tc.want)
		}
	}
	if got := Quantile([]float64{3}, 0.3); got != 3 {
		t.Errorf("quantile of one value = %v, want 3", got)
	}
}

func TestSampleRows(t *testing.T) {
	for _, tc := range []struct {
		name string
		n, s int
	}{
		{name: "all rows", n: 10, s: 20},
		{name: "exactly s", n: 20, s: 20},
		{name: "sample", n: 1000, s: 50},
		{name: "none", n: 0, s: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			rows := sampleRows(rng, tc.n, tc.s)
			if len(rows) != min(tc.n, tc.s) {
				t.Fatalf("%d rows, want %d", len(rows), min(tc.n, tc.s))
			}
			seen := map[int]bool{}
			for _, r := range rows {
				if r < 0 || r >= tc.n || seen[r] {
					t.Fatalf("row %d out of range or repeated in %v", r, rows)
				}
				seen[r] = true
			}
		})
	}
	// Each row is drawn with probability s/n: over many draws the counts
	// of the rows of a small population are close to equal.
	rng := rand.New(rand.NewPCG(3, 4))
	counts := make([]int, 10)
	for range 20000 {
		for _, r := range sampleRows(rng, 10, 3) {
			counts[r]++
		}
	}
	for r, c := range counts {
		if c < 5400 || c > 6600 { // expectation 6000, sd about 65
			t.Fatalf("row %d drawn %d times of 20000 draws of 3 in 10", r, c)
		}
	}
}

// TestAutoBandwidthMatchesBruteForce checks the scale against a direct
// computation when every row is a reference row and an anchor.
func TestAutoBandwidthMatchesBruteForce(t *testing.T) {
	for _, tc := range []struct {
		name string
		n, p int
		dup  int // copies of each row
	}{
		{name: "few rows", n: 40, p: 3, dup: 1},
		{name: "every row an anchor", n: BandwidthAnchors, p: 5, dup: 1},
		{name: "duplicates", n: 60, p: 2, dup: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			var x []float64
			for range tc.n {
				row := make([]float64, tc.p)
				for q := range row {
					row[q] = rng.NormFloat64()
				}
				for range tc.dup {
					x = append(x, row...)
				}
			}
			n := tc.n * tc.dup
			if n > BandwidthAnchors {
				t.Skip("brute force needs every row to be an anchor")
			}
			b, err := AutoBandwidth(x, n, tc.p, 9)
			if err != nil {
				t.Fatal(err)
			}
			all := make([]int, n)
			for i := range all {
				all[i] = i
			}
			want := refScale(x, n, tc.p, all)
			if b.Scale != want || b.Gamma != 1/(BandwidthFactor*want) {
				t.Fatalf("scale %v gamma %v, brute force scale %v", b.Scale, b.Gamma, want)
			}
			if b.Reference != n || b.Anchors != n || !strings.Contains(b.Rule, "nearest neighbour") {
				t.Fatalf("%+v", b)
			}
		})
	}
}

func TestAutoBandwidthRobust(t *testing.T) {
	const n, p = 5000, 3 // more rows than BandwidthReference: a sample
	x := randomSlice(n*p, rand.New(rand.NewPCG(1, 1)).NormFloat64)
	ref, err := AutoBandwidth(x, n, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Reference != BandwidthReference || ref.Anchors != BandwidthAnchors {
		t.Fatalf("%+v", ref)
	}

	t.Run("constant columns add nothing", func(t *testing.T) {
		xc := make([]float64, 0, n*(p+2))
		for i := range n {
			xc = append(xc, 42)
			xc = append(xc, x[i*p:(i+1)*p]...)
			xc = append(xc, -1e6)
		}
		b, err := AutoBandwidth(xc, n, p+2, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The same rows are drawn and the constant terms add exact zeros.
		if b.Gamma != ref.Gamma {
			t.Fatalf("gamma %v with constant columns, %v without", b.Gamma, ref.Gamma)
		}
	})
	t.Run("duplicated rows", func(t *testing.T) {
		// Every row of a 1500-row set three times: the copies of an
		// anchor are not its neighbours, so the scale is that of the
		// distinct rows, not 0.
		const m = 1500
		xd := make([]float64, 0, 3*m*p)
		for range 3 {
			xd = append(xd, x[:m*p]...)
		}
		b, err := AutoBandwidth(xd, 3*m, p, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !(b.Gamma > 0) || math.IsInf(b.Gamma, 0) {
			t.Fatalf("%+v", b)
		}
		// Neighbours now come in threes: the 10th distinct-row neighbour
		// is about the 4th distinct point, so the scale shrinks, but stays
		// within a small factor of the undoubled set's.
		one, err := AutoBandwidth(x[:m*p], m, p, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r := b.Scale / one.Scale; r < 0.2 || r > 1 {
			t.Fatalf("scale %v with every row three times, %v once", b.Scale, one.Scale)
		}
	})
	t.Run("mostly duplicates", func(t *testing.T) {
		// 990 copies of one row and 10 others: still a finite gamma.
		xd := make([]float64, 1000)
		for i := range 10 {
			xd[i*100] = float64(i + 1)
		}
		b, err := AutoBandwidth(xd, 1000, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !(b.Gamma > 0) || math.IsInf(b.Gamma, 0) {
			t.Fatalf("%+v", b)
		}
	})
	t.Run("scale", func(t *testing.T) {
		// Features times 4 (exact in binary): squared distances times 16.
		xs := make([]float64, len(x))
		for i, v := range x {
			xs[i] = 4 * v
		}
		b, err := AutoBandwidth(xs, n, p, 0)
		if err != nil {
			t.Fatal(err)
		}
		if b.Scale != 16*ref.Scale || b.Median != 16*ref.Median {
			t.Fatalf("scale %v after scaling by 4, want 16 × %v", b.Scale, ref.Scale)
		}
	})
	t.Run("seeded", func(t *testing.T) {
		again, _ := AutoBandwidth(x, n, p, 0)
		other, _ := AutoBandwidth(x, n, p, 1)
		if again != ref {
			t.Fatal("same seed, different bandwidth")
		}
		if other.Scale == ref.Scale {
			t.Fatal("seeds 0 and 1 gave the same scale: the seed is not used")
		}
		// Both estimate the same population figure.
		if r := other.Scale / ref.Scale; r < 0.8 || r > 1.25 {
			t.Fatalf("scales %v and %v for seeds 0 and 1", ref.Scale, other.Scale)
		}
	})
}

// TestAutoBandwidthTiny runs AutoBandwidth on small hand-made inputs: the
// gamma and rule it gives, or the error it reports.
func TestAutoBandwidthTiny(t *testing.T) {
	for _, tc := range []struct {
		name      string
		x         []float64
		n, p      int
		wantGamma float64
		wantRule  string
		wantErr   string // if set, the error must contain it
	}{
		{name: "n=0", x: nil, n: 0, p: 2, wantGamma: 1, wantRule: "no two distinct rows"},
		{name: "n=1", x: []float64{1, 2}, n: 1, p: 2, wantGamma: 1, wantRule: "no two distinct rows"},
		{name: "n=2", x: []float64{0, 0, 3, 4}, n: 2, p: 2, wantGamma: 1.0 / (BandwidthFactor * 25), wantRule: "nearest neighbour"},
		{name: "n=2 equal", x: []float64{5, 5}, n: 2, p: 1, wantGamma: 1, wantRule: "no two distinct rows"},
		{name: "all rows equal", x: []float64{1, 1, 1, 1, 1, 1}, n: 3, p: 2, wantGamma: 1, wantRule: "no two distinct rows"},
		// Each row's farthest distinct row (fewer than m): 9, 4, 9; median 9.
		{name: "n=3", x: []float64{0, 1, 3}, n: 3, p: 1, wantGamma: 1.0 / (BandwidthFactor * 9), wantRule: "nearest neighbour"},
		{name: "sizes", x: []float64{1, 2, 3}, n: 2, p: 2, wantErr: "features have 3 values"},
		{name: "p=0", x: nil, n: 2, p: 0, wantErr: "features have 0 values"},
		{name: "NaN", x: []float64{0, math.NaN()}, n: 2, p: 1, wantErr: "is NaN"},
		{name: "overflow", x: []float64{-1e300, 1e300}, n: 2, p: 1, wantErr: "is +Inf"},
		{name: "too close", x: []float64{0, 1e-160}, n: 2, p: 1, wantErr: "out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := AutoBandwidth(tc.x, tc.n, tc.p, 0)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.Gamma != tc.wantGamma {
				t.Fatalf("gamma %v, want %v (%+v)", b.Gamma, tc.wantGamma, b)
			}
			if !strings.Contains(b.Rule, tc.wantRule) {
				t.Fatalf("rule %q, want it to mention %q", b.Rule, tc.wantRule)
			}
		})
	}
}

func BenchmarkAutoBandwidth(b *testing.B) {
	const n, p = 100000, 16
	x := randomFeatures(n, p, 1)
	for b.Loop() {
		if _, err := AutoBandwidth(x, n, p, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*BandwidthAnchors*BandwidthReference/b.Elapsed().Seconds(), "pairs/s")
}

func ExampleAutoBandwidth() {
	// Two groups of 50 points on a line, 0.01 apart within a group and
	// 10 apart between the groups.
	var x []float64
	for i := range 100 {
		x = append(x, 10*float64(i/50)+0.01*float64(i%50))
	}
	b, err := AutoBandwidth(x, len(x), 1, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.Rule)
	// A row's tenth neighbour is 0.05 away: gamma = 1/(4·0.05²). The median
	// heuristic, 1/median, would give about 0.011, under which the two
	// groups are hardly told apart.
	fmt.Printf("gamma %.3g, neighbour scale %.3g, median %.3g\n", b.Gamma, b.Scale, b.Median)
	// Output:
	// auto: 1/(4 × median squared distance to the 10-th nearest neighbour)
	// gamma 100, neighbour scale 0.0025, median 91.7
}

// TestMassBandwidth checks, on sets small enough that every pair is in the
// sample, that the dense kernel at the rule's gamma has the mass n²/k of k
// balanced clusters, and the rule's answers at its edges.
func TestMassBandwidth(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	for _, tc := range []struct {
		name string
		n, p int
		k    int
		dup  int // copies of each row
	}{
		{"gaussian", 400, 3, 5, 1},
		{"two clusters", 300, 8, 2, 1},
		{"many clusters", 500, 2, 50, 1},
		{"some duplicates", 600, 4, 4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			distinct := tc.n / tc.dup
			base := randomSlice(distinct*tc.p, rng.NormFloat64)
			x := make([]float64, 0, tc.n*tc.p)
			for range tc.dup {
				x = append(x, base...)
			}
			bw, err := MassBandwidth(x, tc.n, tc.p, tc.k, 0)
			if err != nil {
				t.Fatal(err)
			}
			var mass float64
			for i := range tc.n {
				for j := range tc.n {
					mass += math.Exp(-bw.Gamma * SqDist(x[i*tc.p:(i+1)*tc.p], x[j*tc.p:(j+1)*tc.p]))
				}
			}
			want := float64(tc.n) * float64(tc.n) / float64(tc.k)
			if math.Abs(mass-want) > 1e-9*want {
				t.Errorf("gamma %v: mass %v, want n²/k = %v (%s)", bw.Gamma, mass, want, bw.Rule)
			}
			if !strings.HasPrefix(bw.Rule, "mass: mean affinity") {
				t.Errorf("rule %q", bw.Rule)
			}
		})
	}

	x := randomSlice(200*2, rng.NormFloat64)
	if _, err := MassBandwidth(x, 200, 2, 1, 0); err == nil {
		t.Error("k = 1: no error")
	}
	// Half the rows equal: their pairs alone have more than the mass of
	// 5 clusters, so the rule falls back to AutoBandwidth.
	for i := range 100 {
		copy(x[i*2:i*2+2], []float64{1, 1})
	}
	bw, err := MassBandwidth(x, 200, 2, 5, 0)
	auto, _ := AutoBandwidth(x, 200, 2, 0)
	if err != nil || bw.Gamma != auto.Gamma || !strings.Contains(bw.Rule, "duplicated rows") {
		t.Errorf("mostly duplicates: gamma %v (%q), %v; want AutoBandwidth's %v", bw.Gamma, bw.Rule, err, auto.Gamma)
	}
	x[5] = math.Inf(1)
	if _, err := MassBandwidth(x, 200, 2, 5, 0); err == nil {
		t.Error("infinite feature: no error")
	}
}

func ExampleMassBandwidth() {
	// The two groups of ExampleAutoBandwidth, clustered into k = 2.
	var x []float64
	for i := range 100 {
		x = append(x, 10*float64(i/50)+0.01*float64(i%50))
	}
	b, err := MassBandwidth(x, len(x), 1, 2, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.Rule)
	// P's entries sum to n²/k: the mass of two clusters of 50.
	var mass float64
	for _, xi := range x {
		for _, xj := range x {
			mass += math.Exp(-b.Gamma * (xi - xj) * (xi - xj))
		}
	}
	fmt.Printf("sum of P / n² = %.4f\n", mass/1e4)
	// Output:
	// mass: mean affinity 0.4949, the mass of 2 balanced clusters
	// sum of P / n² = 0.5000
}

func BenchmarkMassBandwidth(b *testing.B) {
	const n, p = 20000, 16
	x := randomFeatures(n, p, 1)
	for b.Loop() {
		if _, err := MassBandwidth(x, n, p, 10, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*BandwidthAnchors*BandwidthReference/b.Elapsed().Seconds(), "pairs/s")
}
