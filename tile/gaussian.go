package tile

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/ssnmf/ssnmf/internal/negexp"
	"github.com/ssnmf/ssnmf/internal/ordered"
)

// Gaussian is the Source of the Gaussian kernel of the rows of a feature
// matrix: P_ij = exp(-Gamma ||x_i - x_j||^2). Its entries lie in (0, 1] and
// its diagonal is 1.
//
// With Float32 precision every value is rounded to float32. The vectorized
// kernel (see Engine.Kernel) computes such tiles in float32 arithmetic; the
// portable kernel computes them in float64 and rounds.
type Gaussian struct {
	x     []float64
	n, p  int
	gamma float64
	prec  Precision

	packOnce sync.Once       // guards pack
	pack     *packedFeatures // features for the vectorized kernel, on first use
}

// NewGaussian returns the Gaussian kernel source over x, an n×p row-major
// feature matrix, with bandwidth parameter gamma > 0. It does not copy x.
func NewGaussian(x []float64, n, p int, gamma float64) (*Gaussian, error) {
	return NewGaussianPrecision(x, n, p, gamma, Float64)
}

// NewGaussianPrecision is NewGaussian with kernel values in the given
// precision.
func NewGaussianPrecision(x []float64, n, p int, gamma float64, prec Precision) (*Gaussian, error) {
	switch {
	case prec != Float64 && prec != Float32:
		return nil, fmt.Errorf("gaussian kernel: unknown precision %v", prec)
	case n < 1 || p < 1:
		return nil, fmt.Errorf("gaussian kernel: need n >= 1 and p >= 1, have n=%d p=%d", n, p)
	case len(x) != n*p:
		return nil, fmt.Errorf("gaussian kernel: features have %d values, want n*p = %d", len(x), n*p)
	case !(gamma > 0) || math.IsInf(gamma, 0):
		return nil, fmt.Errorf("gaussian kernel: gamma must be positive and finite, have %v", gamma)
	}
	return &Gaussian{x: x, n: n, p: p, gamma: gamma, prec: prec}, nil
}

// N returns the number of rows of P.
func (g *Gaussian) N() int { return g.n }

// Precision returns the precision of the kernel values.
func (g *Gaussian) Precision() Precision { return g.prec }

// Tile writes P[r0:r1, c0:c1] into dst, row-major with stride c1-c0.
// A diagonal tile (r0 == c0, r1 == c1) is computed on and above the
// diagonal and mirrored, so it is exactly symmetric.
func (g *Gaussian) Tile(dst []float64, r0, r1, c0, c1 int) error {
	w := c1 - c0
	p, x, gamma := g.p, g.x, g.gamma
	diag := r0 == c0 && r1 == c1
	f32 := g.prec == Float32
	for i := r0; i < r1; i++ {
		xi := x[i*p : (i+1)*p]
		row := dst[(i-r0)*w : (i-r0+1)*w]
		jlo := c0
		if diag {
			jlo = i
		}
		for j := jlo; j < c1; j++ {
			v := negexp.Of(gamma * SqDist(xi, x[j*p:(j+1)*p]))
			if f32 {
				v = float64(float32(v))
			}
			row[j-c0] = v
		}
	}
	if diag {
		mirrorUpper(dst, w)
	}
	return nil
}

// mirrorUpper copies the upper triangle of the w×w tile dst (row-major)
// onto its lower triangle, which makes the tile exactly symmetric.
func mirrorUpper(dst []float64, w int) {
	for i := 1; i < w; i++ {
		for j := range i {
			dst[i*w+j] = dst[j*w+i]
		}
	}
}

// SqDist returns the squared Euclidean distance between a and b (at least
// as long as a), summed in feature order.
//
// It defines every distance of the kNN search, so its bits must not depend
// on the architecture: each square is rounded (an explicit float64
// conversion) before it is added, which forbids the compiler to fuse the
// two into one multiply-add, as it otherwise would on arm64.
func SqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var d float64
	for q, v := range a {
		t := v - b[q]
		d += float64(t * t)
	}
	return d
}

// DefaultGammaPairs is the number of random pairs MedianGamma samples.
const DefaultGammaPairs = 20000

// MedianGamma returns the median heuristic bandwidth 1/median(d^2), where
// d^2 ranges over the squared distances of up to pairs random pairs of
// distinct rows of x (n×p), drawn with the given seed. Pairs of identical rows
// are left out of the median, so duplicated rows do not drive gamma to
// infinity. It returns 0 when no pair of different rows was sampled (n < 2,
// or all sampled rows equal): the data then give no scale. It fails if the
// median is so large or small that gamma overflows or underflows.
//
// With gamma = 1/median(d^2), a typical pair of points has affinity
// exp(-1) ≈ 0.37 whatever the scale of the features, so P neither collapses
// to the identity (gamma too large, as gamma = 1 does on features in 0..100)
// nor to the all-ones matrix (gamma too small). The cost is O(pairs·p).
func MedianGamma(x []float64, n, p int, pairs int, seed uint64) (float64, error) {
	if len(x) != n*p || p < 1 {
		return 0, errors.New("median gamma: features do not match n×p")
	}
	if n < 2 {
		return 0, nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x6761_6d6d_61)) // "gamma"
	d2 := make([]float64, 0, pairs)
	for range pairs {
		i := rng.IntN(n)
		j := rng.IntN(n - 1)
		if j >= i {
			j++
		}
		if d := SqDist(x[i*p:(i+1)*p], x[j*p:(j+1)*p]); d > 0 {
			d2 = append(d2, d)
		}
	}
	if len(d2) == 0 {
		return 0, nil
	}
	slices.Sort(d2)
	m := len(d2) / 2
	med := d2[m]
	if len(d2)%2 == 0 {
		med = float64(d2[m-1]/2) + float64(d2[m]/2)
	}
	gamma := 1 / med
	if !(gamma > 0) || math.IsInf(gamma, 0) {
		return 0, fmt.Errorf("median squared distance %g between rows is out of range for a bandwidth", med)
	}
	return gamma, nil
}

// Standardize rescales each column of x (n×p, row-major) in place to mean 0
// and unit population standard deviation. A constant column becomes 0.
//
// Each column is first multiplied by the power of two that brings its
// largest absolute value into [1/2, 1), so that the squares of the
// deviations neither overflow (a column around 1e160) nor underflow (one
// around 1e-300). Scaling by a power of two is exact, so a column that
// needed no scaling gets the same bits as without it.
func Standardize(x []float64, n, p int) { StandardizeWorkers(x, n, p, 1) }

// StandardizeWorkers is Standardize with the rows rescaled on workers
// goroutines, with the same bits for any number: the moments are summed
// in row order on the caller's. Its error is a fault of x on another
// goroutine, where x is a mapped file (fault.Guard); one is never.
func StandardizeWorkers(x []float64, n, p, workers int) error {
	if n == 0 {
		return nil
	}
	scale := columnScales(x, n, p)
	mean, sd := moments(x, n, p, scale)
	const chunk = 1 << 14 // rows a task
	rescale := func(t int) {
		for i := t * chunk; i < min(n, (t+1)*chunk); i++ {
			row := x[i*p : (i+1)*p]
			for q := range row {
				row[q] = zscore(float64(row[q]*scale[q]), mean[q], sd[q])
			}
		}
	}
	tasks := (n + chunk - 1) / chunk
	if workers <= 1 {
		for t := range tasks {
			rescale(t)
		}
		return nil
	}
	return ordered.Each(context.Background(), workers, tasks, rescale)
}

// Moments returns the column means and population standard deviations of
// x (n×p, row-major, n > 0) that Standardize uses, in x's own units:
// computed as Standardize computes them, on the columns scaled by a power
// of two, then scaled back (exactly). StandardizeRow applies them to a new
// row with the bits Standardize gives a row of x.
func Moments(x []float64, n, p int) (mean, sd []float64) {
	scale := columnScales(x, n, p)
	mean, sd = moments(x, n, p, scale)
	for q, s := range scale {
		mean[q] /= s
		sd[q] /= s
	}
	return mean, sd
}

// MaxFeature returns the largest absolute feature value whose squared
// distances, summed over p features, stay finite: (2x)²·p <= MaxFloat64/4,
// for the raw features of a solve without standardization and for the
// standardized values of a model's new rows alike.
func MaxFeature(p int) float64 { return math.Sqrt(math.MaxFloat64/float64(4*max(p, 1))) / 2 }

// StandardizeRow writes to dst the row x standardized by the column means
// and deviations of Moments: (x - mean)/sd, and 0 for a column without
// spread, as Standardize does.
func StandardizeRow(dst, x, mean, sd []float64) {
	for q, v := range x {
		dst[q] = zscore(v, mean[q], sd[q])
	}
}

// zscore is (v - mean)/sd, or 0 for a column without spread: sd 0, or
// below 10⁻¹² of the mean (a constant column, up to rounding). Scaling v,
// mean and sd by one power of two gives the same bits.
func zscore(v, mean, sd float64) float64 {
	if sd > 0 && sd > 1e-12*math.Abs(mean) {
		return (v - mean) / sd
	}
	return 0
}

// moments returns the means and population standard deviations of the
// columns of x (n×p) multiplied by scale, summed in row order. Products are
// rounded before they are added or subtracted (explicit float64
// conversions), so that no architecture fuses them: the standardized
// features have the same bits everywhere.
func moments(x []float64, n, p int, scale []float64) (mean, sd []float64) {
	mean, sd = make([]float64, p), make([]float64, p)
	for i := range n {
		for q, v := range x[i*p : (i+1)*p] {
			mean[q] += float64(v * scale[q])
		}
	}
	for q := range mean {
		mean[q] /= float64(n)
	}
	for i := range n {
		for q, v := range x[i*p : (i+1)*p] {
			t := float64(v*scale[q]) - mean[q]
			sd[q] += float64(t * t)
		}
	}
	for q := range sd {
		sd[q] = math.Sqrt(sd[q] / float64(n))
	}
	return mean, sd
}

// columnScales returns, for each column of x (n×p, row-major), the power
// of two that brings its largest finite absolute value into [1/2, 1).
func columnScales(x []float64, n, p int) []float64 {
	top := make([]float64, p)
	for i := range n {
		for q, v := range x[i*p : (i+1)*p] {
			if a := math.Abs(v); a > top[q] && !math.IsInf(a, 0) {
				top[q] = a
			}
		}
	}
	scale := make([]float64, p)
	for q, t := range top {
		scale[q] = 1
		if t > 0 {
			_, e := math.Frexp(t)
			scale[q] = math.Ldexp(1, -e)
		}
	}
	return scale
}

// ColumnMeans returns the mean of each column of x (n×p, row-major, n > 0),
// summed in row order: the centre of the vectorized kernels' features.
func ColumnMeans(x []float64, n, p int) []float64 {
	mean := make([]float64, p)
	for i := range n {
		for q, v := range x[i*p : (i+1)*p] {
			mean[q] += v
		}
	}
	for q := range mean {
		mean[q] /= float64(n)
	}
	return mean
}
