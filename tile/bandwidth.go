package tile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ssnmf/ssnmf/internal/negexp"
	"github.com/ssnmf/ssnmf/internal/sample"
	"github.com/ssnmf/ssnmf/store"
)

// The constants of AutoBandwidth; docs/bandwidth.md gives the measurements
// behind them.
const (
	// BandwidthNeighbor is m: the scale of the kernel is the squared
	// distance from a row to its m-th nearest distinct neighbour.
	BandwidthNeighbor = 10
	// BandwidthFactor is c in Gamma = 1/(c·s): the m nearest neighbours of a
	// typical row get affinity at least exp(-1/c).
	BandwidthFactor = 4
	// BandwidthReference is the number of rows, drawn at random, among
	// which neighbours are sought when n is larger. It bounds the cost and
	// makes the rule independent of n for large n.
	BandwidthReference = 4096
	// BandwidthAnchors is the number of rows whose neighbours are measured.
	BandwidthAnchors = 1024
)

// medianAnchors is the number of anchors whose distances make up
// Bandwidth.Median, a figure for comparison only.
const medianAnchors = 32

// Bandwidth is a Gaussian kernel bandwidth chosen from the data by
// AutoBandwidth, with the figures behind it for the run summary.
type Bandwidth struct {
	Gamma     float64 // the kernel parameter: P_ij = exp(-Gamma ||x_i - x_j||^2)
	Rule      string  // how Gamma was chosen, in words
	Scale     float64 // AutoBandwidth: median squared distance of an anchor to its m-th nearest distinct neighbour
	Median    float64 // median squared distance between distinct rows (the first medianAnchors anchors to the reference rows), for comparison
	Reference int     // rows among which neighbours were sought
	Anchors   int     // anchors whose neighbours were measured
}

// AutoBandwidth returns the default bandwidth of the Gaussian kernel over
// the rows of x (n×p, row-major):
//
//	Gamma = 1 / (BandwidthFactor · s),
//
// where s is the median, over BandwidthAnchors random rows, of the squared
// distance from the row to its BandwidthNeighbor-th nearest distinct
// neighbour among BandwidthReference random rows (all rows if n is
// smaller). With m = 10 and c = 4, a typical row's ten nearest neighbours
// have affinity at least exp(-1/4) ≈ 0.78, and the affinity then decays at
// the scale of the data's local structure rather than of its overall spread.
// The rows are drawn with seed; the cost is O(BandwidthAnchors ·
// BandwidthReference · p) whatever n, with no n² work.
//
// Why neighbours rather than the median of all distances (the median
// heuristic): measured on the shared data sets with standardized features
// and k = the number of classes, the gamma that best matched the labels was
// 2.5, 4 and 6-8 times 1/median on yeast, satimage and pendigits, but 0.27,
// 0.19 and 0.23 (a spread of 1.4 instead of 3) times 1/s; see
// docs/bandwidth.md.
//
// Rows identical to the anchor are not neighbours, so duplicated rows cannot
// make Gamma infinite, and constant features add 0 to every distance. When
// no anchor has a distinct neighbour (n < 2, or all rows equal) the data give
// no scale: Gamma is 1 and Rule says so. It fails on inconsistent sizes, on
// values that are not finite, and when s is so small or large that Gamma is
// not a positive finite number.
func AutoBandwidth(x []float64, n, p int, seed uint64) (Bandwidth, error) {
	if n < 0 || p < 1 || len(x) != n*p {
		return Bandwidth{}, fmt.Errorf("bandwidth: features have %d values, want n*p with n = %d, p = %d", len(x), n, p)
	}
	rng := rand.New(rand.NewPCG(seed, 0x62616e64)) // "band"
	ref := sampleRows(rng, n, BandwidthReference)
	anchors := ref[:min(len(ref), BandwidthAnchors)]
	b := Bandwidth{Reference: len(ref), Anchors: len(anchors)}
	// The rows are gathered once into memory of their own: where x is a
	// mapped file larger than memory, each anchor's pass over rows
	// scattered through it would read them from the disk again and again.
	rows := store.GatherRows(make([]float64, len(ref)*p), x, p, ref)
	scales := make([]float64, 0, len(anchors))
	all := make([]float64, 0, min(len(anchors), medianAnchors)*len(ref))
	near := make([]float64, 0, BandwidthNeighbor) // the smallest distances so far, ascending
	for ai, a := range anchors {
		xa := rows[ai*p : (ai+1)*p]
		near = near[:0]
		for r, j := range ref {
			d := SqDist(xa, rows[r*p:(r+1)*p])
			if math.IsNaN(d) || math.IsInf(d, 0) {
				return Bandwidth{}, fmt.Errorf("bandwidth: the squared distance between rows %d and %d is %v", a, j, d)
			}
			if d == 0 {
				continue // the anchor itself, or a duplicate of it
			}
			if ai < medianAnchors {
				all = append(all, d)
			}
			if len(near) == BandwidthNeighbor && d >= near[len(near)-1] {
				continue
			}
			if len(near) < BandwidthNeighbor {
				near = append(near, d)
			} else {
				near[len(near)-1] = d
			}
			for i := len(near) - 1; i > 0 && near[i] < near[i-1]; i-- {
				near[i], near[i-1] = near[i-1], near[i]
			}
		}
		if len(near) > 0 {
			scales = append(scales, near[len(near)-1])
		}
	}
	if len(scales) == 0 {
		b.Gamma, b.Rule = 1, "auto: no two distinct rows, gamma = 1 used"
		return b, nil
	}
	slices.Sort(scales)
	slices.Sort(all)
	b.Scale = Quantile(scales, 0.5)
	b.Median = Quantile(all, 0.5)
	b.Gamma = 1 / (BandwidthFactor * b.Scale)
	if !(b.Gamma > 0) || math.IsInf(b.Gamma, 0) {
		return Bandwidth{}, fmt.Errorf("bandwidth: the squared distance %g of rows to their %d-th nearest neighbour is out of range for a bandwidth", b.Scale, BandwidthNeighbor)
	}
	b.Rule = fmt.Sprintf("auto: 1/(%d × median squared distance to the %d-th nearest neighbour)", BandwidthFactor, BandwidthNeighbor)
	return b, nil
}

// sampleRows returns min(n, s) distinct row indices in [0, n) in random
// order: all rows, shuffled, when n <= s, else a uniform sample drawn by
// Floyd's algorithm in O(s) time and memory.
func sampleRows(rng *rand.Rand, n, s int) []int {
	if n <= s {
		return rng.Perm(n)
	}
	rows := sample.Rows(rng, n, s)
	rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	return rows
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

// MassBandwidth returns the bandwidth of the Gaussian kernel over the rows
// of x (n×p, row-major) at which P has the mass of k balanced clusters:
// the sum of all of P's entries is n²/k, the sum of the entries of W Wᵀ
// for k clusters of n/k rows each with one-hot memberships. So the mean
// affinity between two distinct rows is (n/k - 1)/(n - 1), about 1/k.
//
// The rule is aware of k. A fixed bandwidth gives P a mass that has
// nothing to do with k, and the simplex constraint then pulls the solution
// either to a few large clusters (too much mass) or to near-uniform rows
// (too little; see the fw package doc on scale).
//
// The mean is estimated on the pairs of BandwidthAnchors random rows with
// BandwidthReference random rows (all rows if n is smaller), drawn with
// seed, and gamma is found by Newton's method on its logarithm, kept in a
// bracket; the mean is decreasing in gamma. Duplicated rows have affinity 1 at any gamma: when
// they alone make up the target mass, no gamma has it, and MassBandwidth
// returns AutoBandwidth's instead, with a Rule that says so. It fails on
// inconsistent sizes, k < 2, values that are not finite, and a gamma out
// of the range of float64.
func MassBandwidth(x []float64, n, p, k int, seed uint64) (Bandwidth, error) {
	if n < 0 || p < 1 || len(x) != n*p {
		return Bandwidth{}, fmt.Errorf("bandwidth: features have %d values, want n*p with n = %d, p = %d", len(x), n, p)
	}
	if k < 2 {
		return Bandwidth{}, fmt.Errorf("bandwidth: the mass rule needs k >= 2 clusters, have %d", k)
	}
	if n < 2 {
		return Bandwidth{Gamma: 1, Rule: "mass: fewer than two rows, gamma = 1 used"}, nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d617373)) // "mass"
	ref := sampleRows(rng, n, BandwidthReference)
	anchors := ref[:min(len(ref), BandwidthAnchors)]
	var d []float64 // the squared distances of the sampled pairs, 0s left out
	pairs, zeros := 0, 0
	for _, a := range anchors {
		xa := x[a*p : (a+1)*p]
		for _, j := range ref {
			if j == a {
				continue
			}
			v := SqDist(xa, x[j*p:(j+1)*p])
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return Bandwidth{}, fmt.Errorf("bandwidth: the squared distance between rows %d and %d is %v", a, j, v)
			}
			pairs++
			if v == 0 {
				zeros++
				continue
			}
			d = append(d, v)
		}
	}
	target := (float64(n)/float64(k) - 1) / float64(n-1)
	b := Bandwidth{Reference: len(ref), Anchors: len(anchors)}
	if len(d) == 0 || float64(zeros) >= target*float64(pairs) {
		auto, err := AutoBandwidth(x, n, p, seed)
		if err != nil {
			return Bandwidth{}, err
		}
		auto.Rule = fmt.Sprintf("mass: duplicated rows alone (%.3g of the pairs) have the mass of %d clusters; %s", float64(zeros)/float64(pairs), k, auto.Rule)
		return auto, nil
	}
	slices.Sort(d)
	b.Median = Quantile(d, 0.5)
	// Solve F(u) = 0, F(u) the mean affinity at gamma = e^u minus the
	// target, by Newton's method on u, safeguarded by a bracket [lo, hi]
	// with F(lo) > 0 >= F(hi) (F decreases in u). Each evaluation is one
	// pass over the sampled distances in a fixed order.
	eval := func(u float64) (f, df float64) {
		g := math.Exp(u)
		var s, sd float64
		for _, v := range d {
			e := negexp.Of(g * v)
			s += e
			sd += v * e
		}
		return (s+float64(zeros))/float64(pairs) - target, -g * sd / float64(pairs)
	}
	u := -math.Log(b.Median)
	lo, hi := math.Inf(-1), math.Inf(1)
	for range 200 {
		f, df := eval(u)
		if f > 0 {
			lo = u
		} else {
			hi = u
		}
		next := u - f/df
		if !(df < 0) || !(next > lo && next < hi) {
			// Outside the bracket: bisect it, or widen it while one end
			// is still open.
			switch {
			case math.IsInf(lo, -1):
				next = hi - 4
			case math.IsInf(hi, 1):
				next = lo + 4
			default:
				next = (lo + hi) / 2
			}
		}
		done := math.Abs(next-u) <= 1e-12*max(1, math.Abs(u))
		u = next
		if done {
			break
		}
	}
	b.Gamma = math.Exp(u)
	if !(b.Gamma > 0) || math.IsInf(b.Gamma, 0) {
		return Bandwidth{}, fmt.Errorf("bandwidth: no finite gamma > 0 gives mean affinity %.3g (k = %d)", target, k)
	}
	b.Rule = fmt.Sprintf("mass: mean affinity %.4g, the mass of %d balanced clusters", target, k)
	return b, nil
}
