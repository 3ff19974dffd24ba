package tile

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Bandwidth is a Gaussian kernel bandwidth chosen from the data by
// AutoBandwidth, with the figures behind it for the run summary.
type Bandwidth struct {
	Gamma    float64 // the kernel parameter: P_ij = exp(-Gamma ||x_i - x_j||^2)
	Rule     string  // how Gamma was chosen, in words
	Level    float64 // the quantile level used, in (0, 1)
	SqDist   float64 // that quantile of the sampled squared distances; Gamma = 1/SqDist
	Median   float64 // the median of the sampled squared distances, for reference
	Pairs    int     // random pairs of rows sampled
	Distinct int     // of which pairs of distinct rows (the others are duplicates, left out)
}

// AutoBandwidth returns the default bandwidth for clustering the rows of x
// (n×p, row-major) into k clusters: Gamma = 1/q, where q is the
// AutoLevel(k)-quantile of the squared distances between DefaultGammaPairs
// random pairs of distinct rows drawn with seed. The cost is
// O(DefaultGammaPairs·p), with no n² work.
//
// The reasoning. If the data fall into k groups of similar size, about a
// fraction 1/k of all pairs lie within a group, and those are the closest
// pairs; the 1/k-quantile of the pairwise squared distances is then the
// scale of a within-group distance. With Gamma = 1/q a typical within-group
// pair has affinity about exp(-1) and pairs across groups, farther apart,
// much less, so P is close to the block pattern that W Wᵀ can fit. The
// median heuristic (level 1/2) ignores k and, on standardized data, is
// several times too wide for the data sets measured in docs/bandwidth.md.
//
// Pairs of identical rows are left out of the sample, so duplicated rows
// cannot make Gamma infinite, and constant features add 0 to every distance.
// When the sample holds no pair of distinct rows (n < 2, or every sampled
// row equal), the data give no scale: Gamma is 1 and Rule says so. It fails
// only on inconsistent sizes or k < 1, or when the quantile is so small or
// large that 1/q is not a positive finite number.
func AutoBandwidth(x []float64, n, p, k int, seed uint64) (Bandwidth, error) {
	if k < 1 {
		return Bandwidth{}, fmt.Errorf("bandwidth: k must be >= 1, have %d", k)
	}
	level := AutoLevel(k)
	d2, pairs, err := SampleSqDists(x, n, p, DefaultGammaPairs, seed)
	if err != nil {
		return Bandwidth{}, err
	}
	b := Bandwidth{Level: level, Pairs: pairs, Distinct: len(d2)}
	if len(d2) == 0 {
		b.Gamma, b.Rule = 1, "auto: no two distinct rows sampled, gamma = 1 used"
		return b, nil
	}
	b.SqDist = Quantile(d2, level)
	b.Median = Quantile(d2, 0.5)
	b.Gamma = 1 / b.SqDist
	if !(b.Gamma > 0) || math.IsInf(b.Gamma, 0) {
		return Bandwidth{}, fmt.Errorf("bandwidth: the %.3g-quantile %g of the squared distances between rows is out of range for a bandwidth", level, b.SqDist)
	}
	b.Rule = fmt.Sprintf("auto: 1/(%.3g-quantile of squared distances)", level)
	return b, nil
}

// AutoLevel returns the quantile level AutoBandwidth uses for k clusters:
// 1/k, the fraction of pairs that fall within a group when k groups have
// equal size, kept within [MinLevel, 1/2] so that a huge k still leaves
// enough sampled pairs below the quantile and k = 1 is the median.
func AutoLevel(k int) float64 {
	return min(max(1/float64(k), MinLevel), 0.5)
}

// MinLevel is the smallest quantile level AutoBandwidth uses: with
// DefaultGammaPairs pairs, at least 100 sampled pairs lie below it.
const MinLevel = 0.005

// SampleSqDists draws pairs random pairs (i, j), i != j, of rows of x (n×p,
// row-major) with the given seed and returns the squared distances of those
// whose rows differ, sorted ascending, and the number of pairs drawn (0 when
// n < 2). The cost is O(pairs·p).
func SampleSqDists(x []float64, n, p, pairs int, seed uint64) ([]float64, int, error) {
	switch {
	case n < 0 || p < 1 || len(x) != n*p:
		return nil, 0, fmt.Errorf("bandwidth: features have %d values, want n*p with n = %d, p = %d", len(x), n, p)
	case pairs < 1:
		return nil, 0, errors.New("bandwidth: need at least one pair to sample")
	case n < 2:
		return nil, 0, nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x62616e64)) // "band"
	d2 := make([]float64, 0, pairs)
	for range pairs {
		i := rng.IntN(n)
		j := rng.IntN(n - 1)
		if j >= i {
			j++
		}
		xi, xj := x[i*p:(i+1)*p], x[j*p:(j+1)*p]
		var d float64
		for q, v := range xi {
			t := v - xj[q]
			d += t * t
		}
		if d > 0 {
			d2 = append(d2, d)
		}
	}
	slices.Sort(d2)
	return d2, pairs, nil
}

// Quantile returns the level-quantile of the sorted, nonempty slice s by
// linear interpolation between order statistics (level 0 is the least value,
// 1 the largest, 1/2 the median).
func Quantile(s []float64, level float64) float64 {
	h := level * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	if lo < 0 {
		return s[0]
	}
	f := h - float64(lo)
	return s[lo] + f*(s[lo+1]-s[lo])
}
