package model

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/tile"
)

// nearest is the M best candidates of a row by (d², row), sorted, as
// the training graph's lists keep them.
type nearest struct {
	m   int
	d   []float64
	j   []int32
	cnt int
}

func newNearest(m int) nearest {
	return nearest{m: m, d: make([]float64, m), j: make([]int32, m)}
}

// bound returns the squared distance of the M-th candidate, +Inf if
// there are fewer.
func (b *nearest) bound() float64 {
	if b.cnt < b.m {
		return math.Inf(1)
	}
	return b.d[b.m-1]
}

// offer makes (d, j) a candidate if it is among the best M.
func (b *nearest) offer(d float64, j int32) {
	if b.cnt == b.m && !(d < b.d[b.m-1] || d == b.d[b.m-1] && j < b.j[b.m-1]) {
		return
	}
	pos := b.cnt
	if pos == b.m {
		pos--
	} else {
		b.cnt++
	}
	for pos > 0 && (d < b.d[pos-1] || d == b.d[pos-1] && j < b.j[pos-1]) {
		b.d[pos], b.j[pos] = b.d[pos-1], b.j[pos-1]
		pos--
	}
	b.d[pos], b.j[pos] = d, j
}

// neighbours finds sc.x's M nearest training rows (sc.list) and the
// training rows whose reach it is in (sc.rev), among every training row
// (Exact) or the rows of the probes leaves nearest by centroid.
func (m *Model) neighbours(sc *rowScratch, search graph.KNNMethod, probes int) {
	sc.list.cnt, sc.rev = 0, sc.rev[:0]
	if search != graph.Approximate {
		m.scan(sc, 0, m.meta.N)
		return
	}
	p, leaves := m.meta.P, m.meta.Leaves()
	sc.lf = sc.lf[:0]
	for l := range leaves {
		sc.lf = append(sc.lf, cand{tile.SqDist(sc.x, m.a.Centroids[l*p:(l+1)*p]), int32(l)})
	}
	if probes < leaves {
		// The probes nearest leaves, then in order of their rows.
		slices.SortFunc(sc.lf, func(a, b cand) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.j, b.j)) })
		sc.lf = sc.lf[:probes]
	}
	if sc.seen == nil {
		sc.seen, sc.done = make([]uint32, m.meta.N), make([]uint32, m.meta.N)
	}
	sc.mark()
	for _, l := range sc.lf {
		lo := int(l.j) * m.meta.Leaf
		for j := lo; j < min(m.meta.N, lo+m.meta.Leaf); j++ {
			sc.seen[j] = sc.stamp
		}
		m.scan(sc, lo, min(m.meta.N, lo+m.meta.Leaf))
	}
	m.expand(sc)
}

// expand searches the training graph from the list: it scans the
// neighbour lists of the nearest entry not yet expanded, and again, until
// every entry of the list is expanded (a best-first graph search, as the
// training graph's neighbour descent does). Each row is scanned once.
func (m *Model) expand(sc *rowScratch) {
	mm := m.meta.Neighbors
	for {
		e := 0
		for e < sc.list.cnt && sc.done[sc.list.j[e]] == sc.stamp {
			e++
		}
		if e == sc.list.cnt {
			return
		}
		j := sc.list.j[e]
		sc.done[j] = sc.stamp
		for _, nb := range m.a.Lists[int(j)*mm : (int(j)+1)*mm] {
			if sc.seen[nb] != sc.stamp {
				sc.seen[nb] = sc.stamp
				m.scan(sc, int(nb), int(nb)+1)
			}
		}
	}
}

// mark starts a new search: rows seen and expanded are those stamped with
// the new stamp.
func (sc *rowScratch) mark() {
	sc.stamp++
	if sc.stamp == 0 { // wrapped: forget every stamp
		clear(sc.seen)
		clear(sc.done)
		sc.stamp = 1
	}
}

// scan offers the training rows [lo, hi) to the row's list and records
// those whose reach it is in.
func (m *Model) scan(sc *rowScratch, lo, hi int) {
	p, x := m.meta.P, m.a.Features
	row := func(j int) []float64 { return x[j*p : (j+1)*p] }
	j := lo
	if p <= 16 {
		// No partial sum to stop at: four distances at a time (the same
		// bits), which the processor overlaps, then the offers in order.
		for ; j+4 <= hi; j += 4 {
			var d [4]float64
			d[0], d[1], d[2], d[3] = tile.SqDist4(sc.x, row(j), row(j+1), row(j+2), row(j+3))
			for e, de := range d {
				m.take(sc, de, j+e)
			}
		}
	}
	for ; j < hi; j++ {
		if d, ok := sqDistUpTo(sc.x, row(j), max(sc.list.bound(), m.a.Reach[j])); ok {
			m.take(sc, d, j)
		}
	}
}

// take offers training row j at squared distance d to the row's list, and
// records it if the row is in j's reach.
func (m *Model) take(sc *rowScratch, d float64, j int) {
	if d > max(sc.list.bound(), m.a.Reach[j]) {
		return // neither a neighbour nor in reach
	}
	sc.list.offer(d, int32(j))
	if r := m.a.Reach[j]; d < r || d == r && m.tiedIn(sc.x, j) {
		sc.rev = append(sc.rev, cand{d, int32(j)})
	}
}

// tiedIn reports whether x, at exactly the reach of training row j, is in
// j's list: whether it is one of the rows of j's list at that distance
// (which won the tie by their lower index). At a reach of 0 (j has M or
// more copies) it never is: a copy of j is then a copy of every row of
// the group, of which the graph lists only the lower rows, and counting
// it in the reach of all of them would weigh it G/2 for a group of G.
func (m *Model) tiedIn(x []float64, j int) bool {
	r, mm, p := m.a.Reach[j], m.meta.Neighbors, m.meta.P
	if r == 0 || m.a.Lists == nil {
		return false
	}
	xj := m.a.Features[j*p : (j+1)*p]
	for e := mm - 1; e >= 0; e-- {
		i := int(m.a.Lists[j*mm+e])
		xi := m.a.Features[i*p : (i+1)*p]
		if tile.SqDist(xj, xi) != r {
			return false
		}
		if tile.SqDist(x, xi) == 0 {
			return true
		}
	}
	return false
}

// sqDistUpTo returns tile.SqDist(a, b), with the same bits, and true, or
// false once a partial sum (checked every 16 features) is above limit:
// the row can be neither a neighbour nor in reach. Its squares are rounded
// before they are added, as SqDist's are, so that no architecture fuses
// them.
func sqDistUpTo(a, b []float64, limit float64) (float64, bool) {
	b = b[:len(a)]
	var d float64
	for q, v := range a {
		t := v - b[q]
		d += float64(t * t)
		if q&15 == 15 && d > limit {
			return d, false
		}
	}
	return d, true
}

// Tuned is the effort of the approximate search that Tune chose and the
// recall it measured.
type Tuned struct {
	// Probes is the leaves the search scans before its walk.
	Probes int
	// Recall is the sampled recall@M at Probes (graph.RecallSample): 1
	// for an exact search, NaN when no row was sampled.
	Recall float64
	// Rows is the number of rows sampled, 0 when none was.
	Rows int
}

// Recall measures the approximate search with opt against the exact one:
// Tune with no target, the recall at opt's probes.
func (m *Model) Recall(ctx context.Context, x []float64, rows, s int, seed uint64, opt Options) (float64, int, error) {
	_, t, err := m.Tune(ctx, x, rows, s, seed, 0, opt, nil)
	return t.Recall, t.Rows, err
}

// Tune raises the effort of the approximate search until it reaches
// target: on a seeded sample of s of the rows of x (rows×p, as for
// Predict; graph.SampleRows), whose exact lists one scan of the training
// rows finds (graph.NewQueryRecall), it measures the recall@M of the
// search at opt's probes (DefaultProbes if 0), as the training graph's
// search measures its own, and doubles the probes until the recall is at
// least target, or every leaf is scanned (the exact lists). It calls step,
// if not nil, after each measurement, and returns opt with the probes
// chosen. The sample does not depend on opt.Workers, nor the result. An
// exact search, or a Gaussian model, needs nothing: Recall 1, Rows 0.
func (m *Model) Tune(ctx context.Context, x []float64, rows, s int, seed uint64, target float64, opt Options, step func(Tuned)) (Options, Tuned, error) {
	p := m.meta.P
	search, probes := m.resolve(opt)
	opt.Probes = probes
	if m.meta.Affinity != KNN || search != graph.Approximate {
		return opt, Tuned{Probes: probes, Recall: 1}, nil
	}
	if len(x) != rows*p || s < 0 {
		return opt, Tuned{}, fmt.Errorf("model: recall of %d values as %d rows of %d features, %d sampled", len(x), rows, p, s)
	}
	s = min(s, rows)
	if s == 0 {
		return opt, Tuned{Probes: probes, Recall: math.NaN()}, nil
	}
	idx := graph.SampleRows(rows, s, seed)
	z := make([]float64, s*p)
	for r, i := range idx {
		if err := m.standardize(z[r*p:(r+1)*p], x[int(i)*p:int(i+1)*p]); err != nil {
			return opt, Tuned{}, &RowError{Row: int(i), Err: err}
		}
	}
	mm := min(max(m.meta.Neighbors, 1), m.meta.N)
	ref, err := graph.NewQueryRecall(ctx, z, idx, m.a.Features, m.meta.N, p, mm, opt.Workers, tile.ISAAuto)
	if err != nil {
		return opt, Tuned{}, err
	}
	d, cnt := make([]float64, s*mm), make([]int, s)
	for {
		if err := m.searchSample(ctx, z, s, probes, opt.Workers, d, cnt); err != nil {
			return opt, Tuned{}, err
		}
		t := Tuned{Probes: probes, Rows: s, Recall: ref.Recall(func(r int) []float64 { return d[r*mm : r*mm+cnt[r]] })}
		if step != nil {
			step(t)
		}
		if t.Recall >= target || probes >= m.meta.Leaves() {
			opt.Probes = probes
			return opt, t, nil
		}
		probes = min(2*probes, m.meta.Leaves())
	}
}

// searchSample runs the approximate search with probes on the s
// standardized rows of z, on workers goroutines, and writes the squared
// distances of row r's list to d[r·M:] and their number to cnt[r].
func (m *Model) searchSample(ctx context.Context, z []float64, s, probes, workers int, d []float64, cnt []int) error {
	p := m.meta.P
	return m.eachRow(ctx, s, workers, func(r int, sc *rowScratch) error {
		copy(sc.x, z[r*p:(r+1)*p])
		m.neighbours(sc, graph.Approximate, probes)
		cnt[r] = copy(d[r*sc.list.m:(r+1)*sc.list.m], sc.list.d[:sc.list.cnt])
		return nil
	})
}
