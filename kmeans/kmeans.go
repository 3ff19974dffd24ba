// Package kmeans clusters the rows of a feature matrix by k-means: greedy
// k-means++ seeding followed by Lloyd iterations.
//
// It serves ssnmf twice: as a baseline users can compare the symmetric NMF
// clusters against, and as a starting point for the Frank-Wolfe solver
// (Result.OneHot, Result.Soft). Every pass costs O(n·k·p) and touches each row
// once; nothing of size n² is ever formed.
//
// Passes run in parallel over fixed chunks of rows whose partial sums are
// added in chunk order (package internal/ordered), so a run gives the same
// bits for a given seed whatever the number of workers.
package kmeans

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ssnmf/ssnmf/internal/ordered"
	"github.com/ssnmf/ssnmf/internal/sample"
)

// chunkRows is the number of rows of a task in a pass. It is fixed, not
// derived from the worker count, so that sums are added in the same order
// whatever the number of workers.
const chunkRows = 1024

// Settings control a run. The zero value is usable: it means one start, 100
// Lloyd iterations, one worker and seed 0.
type Settings struct {
	// MaxIter caps the Lloyd iterations of each start; 0 means 100. A start
	// stops earlier when no row changes cluster.
	MaxIter int
	// Starts is the number of seeded k-means++ starts; the one with the
	// lowest inertia is returned. 0 means 1.
	Starts int
	// Seed drives the k-means++ draws. Start r (0-based) uses StartSeed(Seed, r).
	Seed uint64
	// Workers is the number of goroutines; 0 means 1. It never changes the
	// result.
	Workers int
	// Sample, if > 0 and less than the number of rows, is the number of
	// rows, drawn with Seed, on which the starts run; the centers of the
	// best start are then refined by Lloyd iterations over all the rows
	// (at most MaxIter), so that many starts cost about one pass each
	// over a large data set. Result.Inertias are then the sample's.
	Sample int
	// Order, if not nil, numbers the rows of x in the input's order: row
	// i of x is the input's row Order[i], as graph.Partition moves them.
	// The k-means++ draws, the sample and the sums then go by the input's
	// rows, so that the result is the one of the rows in the input's
	// order (the same centers, inertias and labels, bit for bit), the
	// Labels still by row of x. The one exception is the refinement over
	// all the rows after a Sample: its sums are added in the order of x,
	// which reads x in sequence, and may round them differently.
	Order []int32
}

// DefaultMaxIter is the Lloyd iteration cap when Settings.MaxIter is 0.
const DefaultMaxIter = 100

// Result is a k-means clustering of n rows into k clusters.
type Result struct {
	K, P       int
	Centers    []float64 // k×p, row-major: the mean of each cluster's rows
	Labels     []int32   // n: the cluster of each row
	Sizes      []int     // k: rows per cluster; 0 only when there are fewer distinct rows than k
	Inertia    float64   // sum of squared distances of the rows to their cluster's center
	Iterations int       // Lloyd iterations of the returned start
	Converged  bool      // the returned start stopped because no row changed cluster
	Start      int       // which start (0-based) was returned
	Inertias   []float64 // the final inertia of every start, in order
}

// StartSeed returns the seed of start r of a run seeded with seed. Start 0
// uses seed itself, so a one-start run and the first of several agree.
func StartSeed(seed uint64, r int) uint64 {
	if r == 0 {
		return seed
	}
	// SplitMix64 finalizer of seed + r·golden ratio: distinct, well-mixed
	// seeds for the later starts.
	z := seed + uint64(r)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Cluster runs k-means on x, an n×p row-major feature matrix, and returns the
// start with the lowest inertia (the earliest on ties). It fails on
// inconsistent sizes, on k < 1 or k > n, and on a value that is not finite.
// Clusters may end up empty only when x has fewer than k distinct rows.
func Cluster(ctx context.Context, x []float64, n, p, k int, s Settings) (*Result, error) {
	if err := check(x, n, p, k); err != nil {
		return nil, err
	}
	pos, err := positions(s.Order, n)
	if err != nil {
		return nil, err
	}
	if s.Sample > 0 && n > s.Sample && s.Sample >= k {
		return sampled(ctx, x, n, p, k, s, pos)
	}
	starts := max(s.Starts, 1)
	var best *Result
	inertias := make([]float64, 0, starts)
	for r := range starts {
		res, err := run(ctx, x, n, p, k, s, StartSeed(s.Seed, r), pos)
		if err != nil {
			return nil, err
		}
		res.Start = r
		inertias = append(inertias, res.Inertia)
		if best == nil || res.Inertia < best.Inertia {
			best = res
		}
	}
	best.Inertias = inertias
	if pos != nil {
		// The labels by input row, as the model numbers them, go back to
		// the rows of x.
		labels := make([]int32, n)
		for i, q := range pos {
			labels[q] = best.Labels[i]
		}
		best.Labels = labels
	}
	return best, nil
}

// positions returns the inverse of order, a permutation of n rows: the
// row of x of each input row; nil if order is.
func positions(order []int32, n int) ([]int32, error) {
	if order == nil {
		return nil, nil
	}
	if len(order) != n {
		return nil, fmt.Errorf("kmeans: an order of %d rows for %d rows", len(order), n)
	}
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = -1
	}
	for q, i := range order {
		if i < 0 || int(i) >= n || pos[i] >= 0 {
			return nil, fmt.Errorf("kmeans: order[%d] = %d is not a permutation of %d rows", q, i, n)
		}
		pos[i] = int32(q)
	}
	return pos, nil
}

// Seed returns k initial centers (k×p) chosen by greedy k-means++ with the
// given seed: the first uniformly at random, each next one as the best, by
// the resulting inertia, of 2 + ⌊ln k⌋ candidates drawn with probability
// proportional to the squared distance to the nearest center so far. When
// every row already coincides with a center, the remaining centers are
// drawn uniformly (and duplicate existing ones).
func Seed(ctx context.Context, x []float64, n, p, k int, seed uint64, workers int) ([]float64, error) {
	if err := check(x, n, p, k); err != nil {
		return nil, err
	}
	m := &model{x: x, n: n, p: p, k: k, workers: max(workers, 1)}
	return m.seed(ctx, seed)
}

func check(x []float64, n, p, k int) error {
	switch {
	case n < 1 || p < 1:
		return fmt.Errorf("kmeans: need n >= 1 rows and p >= 1 features, have n=%d p=%d", n, p)
	case len(x) != n*p:
		return fmt.Errorf("kmeans: features have %d values, want n*p = %d", len(x), n*p)
	case k < 1:
		return fmt.Errorf("kmeans: k must be >= 1, have %d", k)
	case k > n:
		return fmt.Errorf("kmeans: k = %d is larger than the number of rows (%d)", k, n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("kmeans: row %d, feature %d: value %v is not finite", i/p, i%p, v)
		}
	}
	return nil
}

// model holds the data of one run.
type model struct {
	x          []float64
	n, p, k    int
	workers    int
	chunkTotal []float64 // per-chunk sums of d2, for sampling
	// pos, if not nil, numbers the model's rows in the input's order: its
	// row i is row pos[i] of x (Settings.Order, inverted).
	pos []int32
}

func (m *model) tasks() int { return (m.n + chunkRows - 1) / chunkRows }

func (m *model) bounds(t int) (lo, hi int) { return t * chunkRows, min(m.n, (t+1)*chunkRows) }

func (m *model) row(i int) []float64 {
	if m.pos != nil {
		i = int(m.pos[i])
	}
	return m.x[i*m.p : (i+1)*m.p]
}

func sqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var d float64
	for q, v := range a {
		t := v - b[q]
		d += float64(t * t) // rounded, as tile.SqDist's: no fused multiply-add
	}
	return d
}

// seed is greedy k-means++, its draws from a PCG stream keyed by seed.
func (m *model) seed(ctx context.Context, seed uint64) ([]float64, error) {
	rng := rand.New(rand.NewPCG(seed, 0x6b6d65616e73)) // "kmeans"
	n, p, k := m.n, m.p, m.k
	centers := make([]float64, k*p)
	d2 := make([]float64, n) // squared distance to the nearest center so far
	m.chunkTotal = make([]float64, m.tasks())
	first := rng.IntN(n)
	copy(centers[:p], m.row(first))
	total, err := m.updateD2(ctx, d2, m.row(first), true)
	if err != nil {
		return nil, err
	}
	trials := 2 + int(math.Log(float64(k)))
	cand := make([]int, trials)
	for c := 1; c < k; c++ {
		if !(total > 0) {
			// Every row sits on a center: no distance to sample by.
			copy(centers[c*p:(c+1)*p], m.row(rng.IntN(n)))
			continue
		}
		for t := range cand {
			cand[t] = m.sample(d2, total, rng.Float64()*total)
		}
		pot, err := m.potentials(ctx, d2, cand)
		if err != nil {
			return nil, err
		}
		best := 0
		for t := range pot {
			if pot[t] < pot[best] {
				best = t
			}
		}
		copy(centers[c*p:(c+1)*p], m.row(cand[best]))
		if total, err = m.updateD2(ctx, d2, m.row(cand[best]), false); err != nil {
			return nil, err
		}
	}
	return centers, nil
}

// updateD2 lowers d2 to the squared distances to center where they are
// larger (sets them if init), records the chunk sums and returns the total.
func (m *model) updateD2(ctx context.Context, d2, center []float64, init bool) (float64, error) {
	return m.sumRows(ctx, func(i int) float64 {
		if d := sqDist(m.row(i), center); init || d < d2[i] {
			d2[i] = d
		}
		return d2[i]
	}, func(t int, s float64) { m.chunkTotal[t] = s })
}

// sumRows returns the sum of f(i) over the rows, added in row order within
// each chunk and the chunks' sums in chunk order, whatever the number of
// workers. f runs on the workers, once per row; chunk, if not nil, is
// given each chunk's sum in order.
func (m *model) sumRows(ctx context.Context, f func(i int) float64, chunk func(t int, s float64)) (float64, error) {
	var total float64
	err := ordered.Run(ctx, m.workers, m.tasks(), func() *float64 { return new(float64) },
		func(_ context.Context, t int, sum *float64) error {
			lo, hi := m.bounds(t)
			var s float64
			for i := lo; i < hi; i++ {
				s += f(i)
			}
			*sum = s
			return nil
		},
		func(t int, sum *float64) error {
			if chunk != nil {
				chunk(t, *sum)
			}
			total += *sum
			return nil
		})
	return total, err
}

// sample returns the row at which the running sum of d2 passes u: a draw
// with probability proportional to d2 when u is uniform on [0, total). It
// never returns a row with d2 = 0 as long as total > 0.
func (m *model) sample(d2 []float64, total, u float64) int {
	t := 0
	for ; t < len(m.chunkTotal)-1; t++ {
		if u < m.chunkTotal[t] {
			break
		}
		u -= m.chunkTotal[t]
	}
	lo, hi := m.bounds(t)
	last := -1
	for i := lo; i < hi; i++ {
		if d2[i] > 0 {
			last = i
			if u < d2[i] {
				return i
			}
			u -= d2[i]
		}
	}
	if last >= 0 {
		return last // rounding ran past the chunk's end
	}
	// The chosen chunk has no mass (rounding at a chunk boundary): take the
	// last row with positive mass before it, or the first after it.
	for i := lo - 1; i >= 0; i-- {
		if d2[i] > 0 {
			return i
		}
	}
	for i := hi; i < m.n; i++ {
		if d2[i] > 0 {
			return i
		}
	}
	return 0 // unreachable while total > 0
}

// potentials returns, for each candidate row, the inertia sum_i min(d2_i,
// ||x_i - x_cand||^2) the seeding would have after adding it.
func (m *model) potentials(ctx context.Context, d2 []float64, cand []int) ([]float64, error) {
	pot := make([]float64, len(cand))
	err := ordered.Run(ctx, m.workers, m.tasks(), func() []float64 { return make([]float64, len(cand)) },
		func(_ context.Context, t int, buf []float64) error {
			clear(buf)
			lo, hi := m.bounds(t)
			for i := lo; i < hi; i++ {
				xi := m.row(i)
				for c, r := range cand {
					buf[c] += min(d2[i], sqDist(xi, m.row(r)))
				}
			}
			return nil
		},
		func(_ int, buf []float64) error {
			for c, v := range buf {
				pot[c] += v
			}
			return nil
		})
	return pot, err
}

// lloydSums are the sums one assignment pass produces.
type lloydSums struct {
	sums    []float64 // k×p: sum of the rows assigned to each cluster
	counts  []int
	inertia float64
	changed int
}

// assign sets labels and dist to each row's nearest center (the lowest index
// on ties) and returns the cluster sums.
func (m *model) assign(ctx context.Context, centers []float64, labels []int32, dist []float64) (*lloydSums, error) {
	k, p := m.k, m.p
	tot := &lloydSums{sums: make([]float64, k*p), counts: make([]int, k)}
	err := ordered.Run(ctx, m.workers, m.tasks(),
		func() *lloydSums { return &lloydSums{sums: make([]float64, k*p), counts: make([]int, k)} },
		func(_ context.Context, t int, b *lloydSums) error {
			clear(b.sums)
			clear(b.counts)
			b.inertia, b.changed = 0, 0
			lo, hi := m.bounds(t)
			for i := lo; i < hi; i++ {
				xi := m.row(i)
				best, bd := 0, math.Inf(1)
				for c := range k {
					if d := sqDist(xi, centers[c*p:(c+1)*p]); d < bd {
						best, bd = c, d
					}
				}
				if labels[i] != int32(best) {
					labels[i] = int32(best)
					b.changed++
				}
				dist[i] = bd
				b.inertia += bd
				b.counts[best]++
				s := b.sums[best*p : (best+1)*p]
				for q, v := range xi {
					s[q] += v
				}
			}
			return nil
		},
		func(_ int, b *lloydSums) error {
			for i, v := range b.sums {
				tot.sums[i] += v
			}
			for c, v := range b.counts {
				tot.counts[c] += v
			}
			tot.inertia += b.inertia
			tot.changed += b.changed
			return nil
		})
	return tot, err
}

// fillEmpty gives every empty cluster the row farthest from its own center
// among clusters of more than one row (lowest index on ties), moving that
// row's contribution between the sums. It stops when no row is left at a
// positive distance: the data have fewer distinct rows than clusters.
func (m *model) fillEmpty(s *lloydSums, labels []int32, dist []float64) {
	p := m.p
	for c := range m.k {
		if s.counts[c] > 0 {
			continue
		}
		far, fd := -1, 0.0
		for i, d := range dist {
			if d > fd && s.counts[labels[i]] > 1 {
				far, fd = i, d
			}
		}
		if far < 0 {
			return
		}
		old := int(labels[far])
		xi := m.row(far)
		for q, v := range xi {
			s.sums[old*p+q] -= v
			s.sums[c*p+q] += v
		}
		s.counts[old]--
		s.counts[c]++
		s.inertia -= fd
		labels[far] = int32(c)
		dist[far] = 0
		s.changed++
	}
}

// run is one start: seeding, then Lloyd iterations, on the rows of x
// numbered by pos (see model).
func run(ctx context.Context, x []float64, n, p, k int, s Settings, seed uint64, pos []int32) (*Result, error) {
	m := &model{x: x, n: n, p: p, k: k, workers: max(s.Workers, 1), pos: pos}
	centers, err := m.seed(ctx, seed)
	if err != nil {
		return nil, err
	}
	return m.lloyd(ctx, centers, s.MaxIter)
}

// lloyd runs Lloyd iterations from centers (which it updates) until no
// row changes cluster or maxIter (DefaultMaxIter if 0) have run.
func (m *model) lloyd(ctx context.Context, centers []float64, maxIter int) (*Result, error) {
	if maxIter <= 0 {
		maxIter = DefaultMaxIter
	}
	labels := make([]int32, m.n)
	for i := range labels {
		labels[i] = -1
	}
	dist := make([]float64, m.n)
	res := &Result{K: m.k, P: m.p, Centers: centers, Labels: labels}
	var sums *lloydSums
	var err error
	for it := 1; ; it++ {
		if sums, err = m.assign(ctx, centers, labels, dist); err != nil {
			return nil, err
		}
		m.fillEmpty(sums, labels, dist)
		res.Iterations = it
		if sums.changed == 0 {
			// The centers are already the means of their clusters.
			res.Converged = true
			break
		}
		m.means(centers, sums)
		if it == maxIter {
			break
		}
	}
	res.Sizes = sums.counts
	if !res.Converged {
		// The centers moved after the last assignment: measure against them.
		if res.Inertia, err = m.inertia(ctx, centers, labels); err != nil {
			return nil, err
		}
	} else {
		res.Inertia = sums.inertia
	}
	return res, nil
}

// sampled is Cluster on more than s.Sample rows: the starts run on a
// seeded sample of s.Sample rows (input rows, found in x by pos if not
// nil), and the centers of the best are refined by Lloyd iterations over
// all the rows of x.
func sampled(ctx context.Context, x []float64, n, p, k int, s Settings, pos []int32) (*Result, error) {
	rows := sampleRows(n, s.Sample, s.Seed)
	xs := gather(x, p, rows, pos)
	sub := s
	sub.Sample, sub.Order = 0, nil
	best, err := Cluster(ctx, xs, len(rows), p, k, sub)
	if err != nil {
		return nil, err
	}
	m := &model{x: x, n: n, p: p, k: k, workers: max(s.Workers, 1)}
	res, err := m.lloyd(ctx, best.Centers, s.MaxIter)
	if err != nil {
		return nil, err
	}
	res.Start, res.Inertias = best.Start, best.Inertias
	return res, nil
}

// gather returns the rows of x (p features a row) that rows names, input
// rows found in x by pos if not nil, in the order of rows. It copies them
// in the order of x, so that a sample of a mapped x larger than memory
// costs one sweep of its file, not a page brought in at random for each
// row (and the readahead around it, mostly dropped unread).
func gather(x []float64, p int, rows []int, pos []int32) []float64 {
	xs := make([]float64, len(rows)*p)
	at := make([]int32, len(rows)) // the sample's slots, by their row of x
	for s := range at {
		at[s] = int32(s)
	}
	row := func(s int32) int {
		if pos == nil {
			return rows[s]
		}
		return int(pos[rows[s]])
	}
	slices.SortFunc(at, func(a, b int32) int { return row(a) - row(b) })
	for _, s := range at {
		i := row(s)
		copy(xs[int(s)*p:int(s+1)*p], x[i*p:(i+1)*p])
	}
	return xs
}

// sampleRows returns s distinct rows of n drawn with seed, ascending, so
// that the sample is read in order.
func sampleRows(n, s int, seed uint64) []int {
	rows := sample.Rows(rand.New(rand.NewPCG(seed, 0x73616d706c65)), n, s) // "sample"
	slices.Sort(rows)
	return rows
}

// means sets each nonempty cluster's center to the mean of its rows; an
// empty cluster keeps its center.
func (m *model) means(centers []float64, s *lloydSums) {
	p := m.p
	for c, cnt := range s.counts {
		if cnt == 0 {
			continue
		}
		for q := range p {
			centers[c*p+q] = s.sums[c*p+q] / float64(cnt)
		}
	}
}

// inertia returns the sum of squared distances of the rows to their
// cluster's center.
func (m *model) inertia(ctx context.Context, centers []float64, labels []int32) (float64, error) {
	p := m.p
	return m.sumRows(ctx, func(i int) float64 {
		c := int(labels[i])
		return sqDist(m.row(i), centers[c*p:(c+1)*p])
	}, nil)
}
