package tile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// allSqDists returns the squared distances of every pair i < j of distinct
// rows, sorted: the exact population SampleSqDists samples from.
func allSqDists(x []float64, n, p int) []float64 {
	var d2 []float64
	for i := range n {
		for j := i + 1; j < n; j++ {
			var d float64
			for q := range p {
				t := x[i*p+q] - x[j*p+q]
				d += t * t
			}
			if d > 0 {
				d2 = append(d2, d)
			}
		}
	}
	slices.Sort(d2)
	return d2
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

func TestAutoLevel(t *testing.T) {
	for _, tc := range []struct {
		k    int
		want float64
	}{
		{k: 1, want: 0.5}, {k: 2, want: 0.5}, {k: 4, want: 0.25}, {k: 10, want: 0.1},
		{k: 200, want: 0.005}, {k: 100000, want: MinLevel},
	} {
		if got := AutoLevel(tc.k); got != tc.want {
			t.Errorf("AutoLevel(%d) = %v, want %v", tc.k, got, tc.want)
		}
	}
}

// TestAutoBandwidthMatchesPopulation compares the sampled quantile with the
// quantile of all n(n-1)/2 squared distances.
func TestAutoBandwidthMatchesPopulation(t *testing.T) {
	const n, p = 300, 5
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, n*p)
	for i := range n {
		c := float64(i % 4) // four groups, so the quantiles differ from the median
		for q := range p {
			x[i*p+q] = 3*c + rng.NormFloat64()
		}
	}
	all := allSqDists(x, n, p)
	for _, k := range []int{1, 4, 10} {
		b, err := AutoBandwidth(x, n, p, k, 7)
		if err != nil {
			t.Fatal(err)
		}
		want := Quantile(all, AutoLevel(k))
		if rel := math.Abs(b.SqDist-want) / want; rel > 0.05 {
			t.Errorf("k=%d: sampled quantile %g, population %g (rel. diff %.3f)", k, b.SqDist, want, rel)
		}
		if b.Gamma != 1/b.SqDist || b.Pairs != DefaultGammaPairs || b.Distinct != DefaultGammaPairs {
			t.Errorf("k=%d: %+v", k, b)
		}
		if med := Quantile(all, 0.5); math.Abs(b.Median-med)/med > 0.05 {
			t.Errorf("k=%d: sampled median %g, population %g", k, b.Median, med)
		}
		if !strings.HasPrefix(b.Rule, "auto: 1/(") {
			t.Errorf("rule %q", b.Rule)
		}
	}
}

func TestAutoBandwidthRobust(t *testing.T) {
	const n, p, k = 200, 3, 5
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, n*p)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	ref, err := AutoBandwidth(x, n, p, k, 0)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("constant columns add nothing", func(t *testing.T) {
		xc := make([]float64, 0, n*(p+2))
		for i := range n {
			xc = append(xc, 42)
			xc = append(xc, x[i*p:(i+1)*p]...)
			xc = append(xc, -1e6)
		}
		b, err := AutoBandwidth(xc, n, p+2, k, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The same pairs are drawn and the constant terms add exact zeros.
		if b.Gamma != ref.Gamma {
			t.Fatalf("gamma %v with constant columns, %v without", b.Gamma, ref.Gamma)
		}
	})
	t.Run("duplicated rows", func(t *testing.T) {
		// Every row four times: the pairs of copies of one row (3 in 799
		// of the pairs drawn) are left out, and the distinct pairs keep
		// about the same distribution.
		xd := make([]float64, 0, 4*n*p)
		for i := range n {
			for range 4 {
				xd = append(xd, x[i*p:(i+1)*p]...)
			}
		}
		b, err := AutoBandwidth(xd, 4*n, p, k, 0)
		if err != nil {
			t.Fatal(err)
		}
		if b.Distinct >= b.Pairs || b.Distinct < b.Pairs*9/10 {
			t.Fatalf("%d distinct pairs of %d: duplicates not left out as expected", b.Distinct, b.Pairs)
		}
		if rel := math.Abs(b.Gamma-ref.Gamma) / ref.Gamma; rel > 0.05 {
			t.Fatalf("gamma %v with duplicated rows, %v without", b.Gamma, ref.Gamma)
		}
	})
	t.Run("mostly duplicates", func(t *testing.T) {
		// 990 copies of one row and 10 others: still a finite gamma.
		xd := make([]float64, 1000)
		for i := range 10 {
			xd[i*100] = float64(i + 1)
		}
		b, err := AutoBandwidth(xd, 1000, 1, k, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !(b.Gamma > 0) || math.IsInf(b.Gamma, 0) || b.Distinct == 0 {
			t.Fatalf("%+v", b)
		}
	})
	t.Run("scale", func(t *testing.T) {
		// Features times 4 (exact in binary): squared distances times 16.
		xs := make([]float64, len(x))
		for i, v := range x {
			xs[i] = 4 * v
		}
		b, err := AutoBandwidth(xs, n, p, k, 0)
		if err != nil {
			t.Fatal(err)
		}
		if b.SqDist != 16*ref.SqDist {
			t.Fatalf("quantile %v after scaling by 4, want 16 × %v", b.SqDist, ref.SqDist)
		}
	})
	t.Run("seeded", func(t *testing.T) {
		again, _ := AutoBandwidth(x, n, p, k, 0)
		other, _ := AutoBandwidth(x, n, p, k, 1)
		if again != ref {
			t.Fatal("same seed, different bandwidth")
		}
		if other.SqDist == ref.SqDist {
			t.Fatal("seeds 0 and 1 sampled the same quantile: the seed is not used")
		}
	})
}

func TestAutoBandwidthTiny(t *testing.T) {
	for _, tc := range []struct {
		name      string
		x         []float64
		n, p, k   int
		wantGamma float64
		wantRule  string
	}{
		{name: "n=0", x: nil, n: 0, p: 2, k: 1, wantGamma: 1, wantRule: "no two distinct rows"},
		{name: "n=1", x: []float64{1, 2}, n: 1, p: 2, k: 1, wantGamma: 1, wantRule: "no two distinct rows"},
		{name: "n=2", x: []float64{0, 0, 3, 4}, n: 2, p: 2, k: 2, wantGamma: 1.0 / 25, wantRule: "quantile"},
		{name: "n=2 equal", x: []float64{5, 5}, n: 2, p: 1, k: 2, wantGamma: 1, wantRule: "no two distinct rows"},
		{name: "all rows equal", x: []float64{1, 1, 1, 1, 1, 1}, n: 3, p: 2, k: 2, wantGamma: 1, wantRule: "no two distinct rows"},
		{name: "n=3 k=3", x: []float64{0, 1, 3}, n: 3, p: 1, k: 3, wantGamma: 0, wantRule: "quantile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := AutoBandwidth(tc.x, tc.n, tc.p, tc.k, 0)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantGamma != 0 && b.Gamma != tc.wantGamma {
				t.Fatalf("gamma %v, want %v", b.Gamma, tc.wantGamma)
			}
			if tc.wantGamma == 0 {
				// Distances 1, 4, 9: the 1/3-quantile lies between 1 and 4.
				if !(b.SqDist >= 1 && b.SqDist <= 4) || b.Gamma != 1/b.SqDist {
					t.Fatalf("%+v", b)
				}
			}
			if !strings.Contains(b.Rule, tc.wantRule) {
				t.Fatalf("rule %q, want it to mention %q", b.Rule, tc.wantRule)
			}
		})
	}
}

func TestAutoBandwidthErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		x       []float64
		n, p, k int
		want    string
	}{
		{name: "k=0", x: []float64{1, 2}, n: 2, p: 1, k: 0, want: "k must be >= 1"},
		{name: "sizes", x: []float64{1, 2, 3}, n: 2, p: 2, k: 1, want: "features have 3 values"},
		{name: "p=0", x: nil, n: 2, p: 0, k: 1, want: "features have 0 values"},
		{name: "too close", x: []float64{0, 1e-160}, n: 2, p: 1, k: 1, want: "out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AutoBandwidth(tc.x, tc.n, tc.p, tc.k, 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, _, err := SampleSqDists([]float64{1, 2}, 2, 1, 0, 0); err == nil {
		t.Fatal("SampleSqDists accepted 0 pairs")
	}
}

func BenchmarkAutoBandwidth(b *testing.B) {
	const n, p = 100000, 16
	x := randomFeatures(n, p, 1)
	for b.Loop() {
		if _, err := AutoBandwidth(x, n, p, 10, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*DefaultGammaPairs/b.Elapsed().Seconds(), "pairs/s")
}

func ExampleAutoBandwidth() {
	// Two tight groups of points on a line, far apart.
	x := []float64{0, 0.1, 0.2, 0.3, 10, 10.1, 10.2, 10.3}
	b, err := AutoBandwidth(x, len(x), 1, 2, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.Rule)
	fmt.Printf("gamma %.3g from the %.2g-quantile %.3g of %d sampled pairs\n", b.Gamma, b.Level, b.SqDist, b.Distinct)
	// Output:
	// auto: 1/(0.5-quantile of squared distances)
	// gamma 0.0104 from the 0.5-quantile 96 of 20000 sampled pairs
}
