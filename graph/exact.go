package graph

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/ssnmf/ssnmf/tile"
)

// neighbors finds the m nearest rows of every row, itself first (offered
// at distance -1, below every real one), held by row; or, for part part of
// parts > 1, those of the rows of that part of the blocks of the search
// order, which it also returns (by index, in that order), held in that
// order.
func neighbors(ctx context.Context, x []float64, n, p, m int, opt KNNOptions, part, parts int) (*best, []int32, error) {
	bs := opt.BlockSize
	if bs == 0 {
		bs = 256
	}
	bs = min(bs, n)
	nb := (n + bs - 1) / bs
	// The rows are searched in the order of their projections on the
	// principal direction, and the tiles band by band from the diagonal
	// out: a row meets the rows nearest to it in projection, among them
	// most of its nearest in space, first, so that its bound is tight
	// early and the later tiles offer few candidates. Band d holds the
	// tiles (I, I+d); start[d] is the index of its first.
	perm := projectionOrder(x, n, p)
	xs := make([]float64, n*p)
	for q, i := range perm {
		copy(xs[q*p:(q+1)*p], x[int(i)*p:(int(i)+1)*p])
	}
	//
	// A part searches the tiles that meet its blocks [b0, b1), in the same
	// order, and offers candidates only to its own rows.
	b0, b1 := part*nb/parts, (part+1)*nb/parts
	mine := func(I int) bool { return b0 <= I && I < b1 }
	start := make([]int, nb+1)
	for d := range nb {
		lo1, hi1, lo2, hi2 := bandRuns(d, nb, b0, b1)
		start[d+1] = start[d] + hi1 - lo1 + hi2 - lo2
	}
	tileAt := func(t int) (I, J int) {
		d := sort.Search(nb, func(d int) bool { return start[d+1] > t })
		lo1, hi1, lo2, _ := bandRuns(d, nb, b0, b1)
		if o := t - start[d]; o < hi1-lo1 {
			I = lo1 + o
		} else {
			I = lo2 + o - (hi1 - lo1)
		}
		return I, I + d
	}
	pairs, err := tile.NewPairs(xs, n, p, bs, opt.Kernel)
	if err == nil {
		err = pairs.Pack(opt.Workers)
	}
	if err != nil {
		return nil, nil, err
	}
	if opt.Stats != nil {
		opt.Stats.Kernel = pairs.Kernel()
	}
	// Equal rows are contiguous in the order, by index: a run of them is a
	// group, whose pairs, all at distance 0, are settled here and never
	// screened. A row is its own first candidate (offered at -1, below
	// every distance), and the other rows of its group, by index, follow.
	// A row whose group gives it m candidates is closed: every other row is
	// farther, so its bound is -Inf and no pair reaches it (a data set with
	// many copies of a row costs no more than one with a single copy). The
	// one exception would be two unequal rows whose differences all square
	// below the least float64 (about 1e-162), at distance 0 too; such rows
	// are taken as farther.
	//
	// The candidates are held by position from the part's first, lo (the
	// whole search's by row once it ends): the lists a tile offers to are
	// then those of its two blocks, contiguous in memory.
	lo, hi := min(n, b0*bs), min(n, b1*bs)
	all, slot := newBest(hi-lo, m), func(q int) int { return q - lo }
	mineAt := func(q int) bool { return parts == 1 || lo <= q && q < hi }
	group := make([]int32, n) // by position: the position of the group's first row
	closed := make([]bool, n) // by position
	for a := 0; a < n; {
		b := a + 1
		for b < n && slices.Equal(xs[a*p:(a+1)*p], xs[b*p:(b+1)*p]) {
			b++
		}
		for q := a; q < b; q++ {
			group[q] = int32(a)
			closed[q] = b-a >= m
			if !mineAt(q) {
				continue
			}
			i, s := perm[q], slot(q)
			all.offer(s, -1, i)
			for r := a; r < b && int(all.cnt[s]) < m; r++ {
				if r != q {
					all.offer(s, 0, perm[r])
				}
			}
		}
		a = b
	}
	// worst[q] bounds the distance of the candidates still worth offering
	// to the row at position q of the order: the m-th best committed so far
	// (+Inf before m, -Inf once closed). A tile's work may read an older,
	// larger bound, which only prunes less: a candidate beyond the bound of
	// any committed set of m never makes the final m, so the graph does not
	// depend on the timing.
	//
	// Before its list holds m, a row's bound is the one its own block
	// gives (withinBounds), so that the first tiles offer it about m
	// candidates rather than every row they hold.
	pre, err := withinBounds(ctx, pairs, n, m, b0, b1, max(1, opt.Workers))
	if err != nil {
		return nil, nil, err
	}
	worst := make([]atomic.Uint64, n)
	for q := range perm {
		b := math.Inf(1) // another part's row: never offered to
		if mineAt(q) {
			b = min(all.bound(slot(q)), pre[q])
		}
		if closed[q] {
			b = math.Inf(-1)
		}
		worst[q].Store(math.Float64bits(b))
	}
	bound := func(i int) float64 { return math.Float64frombits(worst[i].Load()) }
	// A tile between two blocks of closed rows has nothing to find.
	open := make([]bool, nb)
	for q, c := range closed {
		open[q/bs] = open[q/bs] || !c
	}
	// The tiles' pairs go straight to the lists, under their rows' locks:
	// the best m of a set of offers do not depend on their order.
	var locks [joinLocks]sync.Mutex
	offer := func(q int, d float64, v int32) float64 {
		l := &locks[q%joinLocks]
		l.Lock()
		if s := slot(q); all.offer(s, d, v) {
			worst[q].Store(math.Float64bits(min(all.bound(s), pre[q])))
		}
		b := bound(q)
		l.Unlock()
		return b
	}
	ts := &tileScreen{pairs: pairs, workers: max(1, opt.Workers), tileAt: tileAt,
		skip: func(I, J int) bool { return !open[I] && !open[J] },
		bound: func(row int) float64 {
			if !mine(row / bs) {
				return math.Inf(-1)
			}
			return bound(row)
		},
		offer: func(row, other int, d float64) float64 { return offer(row, d, perm[other]) },
		take:  func(i, j int) bool { return group[i] != group[j] }, // equal rows were settled before the search
	}
	if opt.Progress != nil {
		ts.progress = func(done int) { opt.Progress("kNN", done, start[nb]) }
	}
	err = ts.run(ctx, start[nb])
	if err != nil {
		return nil, nil, err
	}
	if parts == 1 {
		all.byRow(perm)
	}
	return all, perm[lo:hi], nil
}

// withinBounds returns, by position, a bound of the distance of the m-th
// candidate of each row of the blocks [b0, b1) of pairs: that of its
// (m-1)-th nearest other row of its block (Pairs.Within), the row itself
// being its first candidate; +Inf for the other rows and for m < 2.
func withinBounds(ctx context.Context, pairs *tile.Pairs, n, m, b0, b1, workers int) ([]float64, error) {
	pre := make([]float64, n)
	for q := range pre {
		pre[q] = math.Inf(1)
	}
	if m < 2 {
		return pre, nil
	}
	scratch := make(chan *tile.PairScratch, workers)
	for range workers {
		scratch <- pairs.NewScratch()
	}
	err := parallel(ctx, workers, b1-b0, func(t int) {
		s := <-scratch
		defer func() { scratch <- s }()
		r0, r1 := pairs.Rows(b0 + t)
		pairs.Within(s, b0+t, m-1, pre[r0:r1])
	})
	return pre, err
}

// bandRuns returns the runs [lo1, hi1) and [lo2, hi2), in order and
// disjoint, of the I whose tile (I, I+d) of band d meets the blocks
// [b0, b1) of nb.
func bandRuns(d, nb, b0, b1 int) (lo1, hi1, lo2, hi2 int) {
	clip := func(lo, hi int) (int, int) {
		lo, hi = max(lo, 0), min(hi, nb-d)
		return lo, max(lo, hi)
	}
	lo1, hi1 = clip(b0-d, b1-d) // J = I+d in [b0, b1)
	lo2, hi2 = clip(b0, b1)     // I in [b0, b1)
	if lo2 <= hi1 {
		return lo1, max(hi1, hi2), 0, 0
	}
	return lo1, hi1, lo2, hi2
}

// projectionOrder returns the rows of x (n×p) sorted by their projection on
// the principal direction of the centred rows (ten steps of the power
// method from the all-ones direction), then by their values, then by
// index, so that equal rows are contiguous and in index order. Any order
// gives the same graph; this one makes the search prune early.
func projectionOrder(x []float64, n, p int) []int32 {
	mean := tile.ColumnMeans(x, n, p)
	v, next := make([]float64, p), make([]float64, p)
	for q := range v {
		v[q] = 1
	}
	for range 10 {
		clear(next)
		for i := range n {
			xi := x[i*p : (i+1)*p]
			var t float64
			for q, vq := range v {
				t += (xi[q] - mean[q]) * vq
			}
			for q := range next {
				next[q] += t * (xi[q] - mean[q])
			}
		}
		var norm float64
		for _, a := range next {
			norm = max(norm, math.Abs(a))
		}
		if !(norm > 0) || math.IsInf(norm, 0) {
			break // no spread (or no finite one): keep the direction
		}
		for q := range v {
			v[q] = next[q] / norm
		}
	}
	key := make([]float64, n)
	perm := make([]int32, n)
	for i := range n {
		for q, vq := range v {
			key[i] += x[i*p+q] * vq
		}
		perm[i] = int32(i)
	}
	slices.SortFunc(perm, func(a, b int32) int {
		return cmp.Or(cmp.Compare(key[a], key[b]), slices.Compare(x[int(a)*p:int(a+1)*p], x[int(b)*p:int(b+1)*p]), cmp.Compare(a, b))
	})
	return perm
}

// KNNPart is one task's share of a kNN build: the neighbour lists of the
// rows of part part of parts (KNNRows), which JoinKNN puts together with
// the other parts' into the graph; or the candidates that a round of leaf
// pairs of the approximate search gives the rows of a part
// (LeafRoundRows), which the search merges into its lists.
type KNNPart struct {
	M     int       // the neighbours of a row, the row itself included
	Rows  []int32   // the part's rows, by index
	Count []int32   // the neighbours found for each row, at most M
	Dist  []float64 // M for each row: the squared distances, ascending
	Index []int32   // M for each row: the neighbours
}

// KNNRows searches the neighbours of part part of parts of the rows, as KNN
// would, for a build run as several tasks. The parts are runs of the blocks
// of KNN's search order; a part searches the tiles that meet its blocks,
// about twice its share of KNN's, since KNN offers each pair to both of its
// rows. opt.File is not used.
func KNNRows(ctx context.Context, x []float64, n, p int, opt KNNOptions, part, parts int) (*KNNPart, error) {
	m, err := checkKNN(x, n, p, opt)
	if err != nil {
		return nil, err
	}
	if parts < 1 || part < 0 || part >= parts {
		return nil, fmt.Errorf("graph: kNN part %d of %d", part, parts)
	}
	all, rows, err := neighbors(ctx, x, n, p, m, opt, part, parts)
	if err != nil {
		return nil, err
	}
	kp := &KNNPart{M: m, Rows: rows, Count: make([]int32, len(rows)), Dist: make([]float64, len(rows)*m), Index: make([]int32, len(rows)*m)}
	for q, i := range rows {
		s := q // where neighbors holds the row
		if parts == 1 {
			s = int(i)
		}
		kp.Count[q] = all.cnt[s]
		copy(kp.Dist[q*m:(q+1)*m], all.d[s*m:(s+1)*m])
		copy(kp.Index[q*m:(q+1)*m], all.j[s*m:(s+1)*m])
	}
	return kp, nil
}

// JoinKNN assembles the graph of the parts of a kNN build (KNNRows), which
// must cover every row once: the same bits as KNN with the same options,
// kept in opt.File if it is set.
func JoinKNN(x []float64, n, p int, opt KNNOptions, parts []*KNNPart) (*CSR, error) {
	m, err := checkKNN(x, n, p, opt)
	if err != nil {
		return nil, err
	}
	all := newBest(n, m)
	seen := make([]bool, n)
	for t, kp := range parts {
		if kp.M != m || len(kp.Count) != len(kp.Rows) || len(kp.Dist) != m*len(kp.Rows) || len(kp.Index) != m*len(kp.Rows) {
			return nil, fmt.Errorf("graph: kNN part %d has the shape of %d neighbours, want %d", t, kp.M, m)
		}
		for q, i := range kp.Rows {
			c := kp.Count[q]
			if i < 0 || int(i) >= n || seen[i] || c < 1 || int(c) > m {
				return nil, fmt.Errorf("graph: kNN part %d: row %d (with %d neighbours) is outside 0..%d, repeated, or has no neighbours", t, i, c, n-1)
			}
			seen[i] = true
			for e := range int(c) {
				if j := kp.Index[q*m+e]; j < 0 || int(j) >= n {
					return nil, fmt.Errorf("graph: kNN part %d: row %d has neighbour %d, outside 0..%d", t, i, j, n-1)
				}
			}
			all.cnt[i] = c
			copy(all.d[int(i)*m:int(i+1)*m], kp.Dist[q*m:(q+1)*m])
			copy(all.j[int(i)*m:int(i+1)*m], kp.Index[q*m:(q+1)*m])
		}
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("graph: the kNN parts miss row %d", i)
		}
	}
	var source uint64
	if opt.File != "" {
		source = knnSource(x, n, p, m, opt)
	}
	return all.graph(opt.Weights, opt.File, source, opt.scratchSpace(), max(1, opt.Workers))
}
