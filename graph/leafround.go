package graph

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/ssnmf/ssnmf/tile"
)

// LeafPair is a tile of a round of leaf pairs of the approximate search:
// the leaves I <= J, a leaf being the rows [I·Leaf, (I+1)·Leaf).
type LeafPair struct{ I, J int32 }

// LeafRound is a round of leaf pairs of the approximate search, as it is
// handed to KNNOptions.LeafRound to run elsewhere: the tiles to search and
// every row's bound at the round's start.
type LeafRound struct {
	Round int        // the round's number, from 1
	Leaf  int        // the rows of a leaf, the tiles' edge
	Tiles []LeafPair // the tiles, I <= J, in the search's order
	// Bounds holds, by row, the squared distance of the M-th candidate of
	// its list at the round's start, or a bound below it (in the first
	// round, that of the row's (M-1)-th nearest other row of its leaf),
	// +Inf if it has fewer and none is known: a pair farther than both of
	// its rows' bounds cannot enter either list.
	Bounds []float64
	// Order, if not nil, is the input row of each row (KNNOptions.Order),
	// by which candidates at equal distances are ranked; nil ranks them by
	// row.
	Order []int32
}

// LeafRoundRows searches the tiles of round r that meet part part of parts
// of the leaves (runs of leaves, part·nb/parts to (part+1)·nb/parts), as
// KNN's approximate search would, for a round run as several tasks, and
// returns the best M candidates that the tiles offer to each of the part's
// rows, for the rows that have any. The rows x must be in the order of
// Partition with leaves of r.Leaf rows, as KNN's. A tile between two parts
// is searched by both, each for its own rows: about twice a part's share of
// the round's distances.
//
// The lists after the round are the best M of the lists before and the
// candidates of every tile, by (distance, index), and a candidate farther
// than its row's bound, or than M candidates of the row's own tiles, is not
// among them: so merging the parts into the lists (as the search does when
// KNNOptions.LeafRound is set) gives the lists, and the graph, of the
// round run here, for any parts and workers. opt.File is not used.
func LeafRoundRows(ctx context.Context, x []float64, n, p int, opt KNNOptions, r *LeafRound, part, parts int) (*KNNPart, error) {
	m, err := checkKNN(x, n, p, opt)
	if err != nil {
		return nil, err
	}
	if parts < 1 || part < 0 || part >= parts {
		return nil, fmt.Errorf("graph: leaf round part %d of %d", part, parts)
	}
	if err := r.check(n); err != nil {
		return nil, err
	}
	bs := min(r.Leaf, n)
	nb := (n + bs - 1) / bs
	b0, b1 := part*nb/parts, (part+1)*nb/parts
	lo, hi := min(n, b0*bs), min(n, b1*bs)
	mine := func(I int) bool { return b0 <= I && I < b1 }
	var tiles []LeafPair
	for _, t := range r.Tiles {
		if mine(int(t.I)) || mine(int(t.J)) {
			tiles = append(tiles, t)
		}
	}
	pairs, err := tile.NewPairs(x, n, p, bs, opt.Kernel)
	if err == nil {
		err = pairs.Pack(opt.Workers)
	}
	if err != nil {
		return nil, err
	}
	own := newPartLists(newBest(hi-lo, m), make([]uint64, hi-lo), r.Order)
	own.start(lo, hi, func(i int) float64 { return r.Bounds[i] })
	ts := &tileScreen{pairs: pairs, workers: max(1, opt.Workers), bound: own.threshold, offer: own.offer,
		tileAt: func(t int) (int, int) { return int(tiles[t].I), int(tiles[t].J) }}
	if err := ts.run(ctx, len(tiles)); err != nil {
		return nil, err
	}
	kp := &KNNPart{M: m}
	for s := range hi - lo {
		if c := own.lists.cnt[s]; c > 0 {
			kp.Rows = append(kp.Rows, int32(lo+s))
			kp.Count = append(kp.Count, c)
			kp.Dist = append(kp.Dist, own.lists.d[s*m:(s+1)*m]...)
			kp.Index = append(kp.Index, own.lists.j[s*m:(s+1)*m]...)
		}
	}
	return kp, nil
}

// partLists are the candidates that the tiles of a round offer to a part
// of the rows, [lo, hi), the other rows being offered nothing: a round run
// by parts (LeafRoundRows, searchByParts), where a tile between two parts
// is screened by both, each for its own rows.
type partLists struct {
	lo, hi int
	lists  *best    // by row from lo
	bound  []uint64 // by row from lo: the lesser of the round's bound and the M-th candidate here
	locks  [joinLocks]sync.Mutex
}

// newPartLists returns the lists of a part in lists and bound, ties broken
// by order (KNNOptions.Order; nil: by row).
func newPartLists(lists *best, bound []uint64, order []int32) *partLists {
	lists.id = order
	return &partLists{lists: lists, bound: bound}
}

// start makes the lists those of rows [lo, hi), empty, each row's
// threshold its bound at the round's start.
func (pl *partLists) start(lo, hi int, bound func(row int) float64) {
	pl.lo, pl.hi = lo, hi
	pl.lists.reset(hi - lo)
	for i := lo; i < hi; i++ {
		storeBound(pl.bound, i-lo, bound(i))
	}
}

// threshold is tileScreen's bound: a row's threshold, or -Inf, offered
// nothing, outside the part.
func (pl *partLists) threshold(row int) float64 {
	if row < pl.lo || row >= pl.hi {
		return math.Inf(-1)
	}
	return loadBound(pl.bound, row-pl.lo)
}

// offer is tileScreen's offer, under the row's lock.
func (pl *partLists) offer(row, other int, d float64) float64 {
	s := row - pl.lo
	l := &pl.locks[s%joinLocks]
	l.Lock()
	b := loadBound(pl.bound, s)
	if pl.lists.offer(s, d, int32(other)) {
		b = min(b, pl.lists.bound(s))
		storeBound(pl.bound, s, b)
	}
	l.Unlock()
	return b
}

// check checks a round against n rows.
func (r *LeafRound) check(n int) error {
	if r.Leaf < 1 {
		return fmt.Errorf("graph: leaf round of leaves of %d rows", r.Leaf)
	}
	if len(r.Bounds) != n {
		return fmt.Errorf("graph: leaf round with %d bounds for %d rows", len(r.Bounds), n)
	}
	if r.Order != nil && len(r.Order) != n {
		return fmt.Errorf("graph: leaf round with an order of %d rows for %d rows", len(r.Order), n)
	}
	nb := (n + r.Leaf - 1) / r.Leaf
	for q, t := range r.Tiles {
		if t.I < 0 || t.I > t.J || int(t.J) >= nb {
			return fmt.Errorf("graph: leaf round tile %d is leaves %d,%d, want 0 <= I <= J < %d", q, t.I, t.J, nb)
		}
	}
	for i, b := range r.Bounds {
		if math.IsNaN(b) {
			return fmt.Errorf("graph: leaf round bound of row %d is NaN", i)
		}
	}
	return nil
}

// searchElsewhere runs a round of leaf pairs through KNNOptions.LeafRound
// and merges its parts (LeafRoundRows) into the lists, in part order, and
// returns the number of rows whose list changed: the lists and the count
// of the round run here (search).
func (a *approxSearch) searchElsewhere(ctx context.Context, tiles []tilePair) (int, error) {
	r := &LeafRound{Round: a.round, Leaf: a.bs, Tiles: make([]LeafPair, len(tiles)), Bounds: make([]float64, a.n), Order: a.lists.id}
	for q, t := range tiles {
		r.Tiles[q] = LeafPair(t)
	}
	for i := range r.Bounds {
		r.Bounds[i] = loadBound(a.bound, i)
	}
	parts, err := a.elsewhere(ctx, r)
	if err != nil {
		return 0, err
	}
	clear(a.changed)
	m := a.m
	for t, kp := range parts {
		if err := kp.checkCandidates(a.n, m); err != nil {
			return 0, fmt.Errorf("graph: leaf round %d, part %d: %w", a.round, t, err)
		}
		for q, i := range kp.Rows {
			changed := false
			for e := range int(kp.Count[q]) {
				changed = a.lists.offer(int(i), kp.Dist[q*m+e], kp.Index[q*m+e]) || changed
			}
			if changed {
				a.changed[i] = true
				storeBound(a.bound, int(i), a.lists.bound(int(i)))
			}
		}
	}
	if a.progress != nil {
		a.progress(fmt.Sprintf("kNN round %d", a.round), len(tiles), len(tiles))
	}
	return a.countChanged(), nil
}

// checkCandidates checks the shape of a part of candidates for n rows of
// m: every row and neighbour in range, at most m of them a row, and no
// distance NaN.
func (kp *KNNPart) checkCandidates(n, m int) error {
	if kp.M != m || len(kp.Count) != len(kp.Rows) || len(kp.Dist) != m*len(kp.Rows) || len(kp.Index) != m*len(kp.Rows) {
		return fmt.Errorf("the shape of %d neighbours and %d rows, want %d neighbours", kp.M, len(kp.Rows), m)
	}
	for q, i := range kp.Rows {
		c := int(kp.Count[q])
		if i < 0 || int(i) >= n || c < 0 || c > m {
			return fmt.Errorf("row %d (with %d candidates) is outside 0..%d, or has more than %d", i, c, n-1, m)
		}
		for e := range c {
			if j := kp.Index[q*m+e]; j < 0 || int(j) >= n || math.IsNaN(kp.Dist[q*m+e]) {
				return fmt.Errorf("row %d has candidate %d at %v, outside 0..%d", i, j, kp.Dist[q*m+e], n-1)
			}
		}
	}
	return nil
}

// leafRoundsElsewhere returns the hook that runs a round of leaf pairs
// elsewhere, from opt.LeafRound, or nil.
func leafRoundsElsewhere(x []float64, n, p int, opt KNNOptions) func(context.Context, *LeafRound) ([]*KNNPart, error) {
	if opt.LeafRound == nil {
		return nil
	}
	o := opt
	o.LeafRound, o.Search, o.File, o.Progress, o.Stats, o.Round = nil, nil, "", nil, nil, nil
	o.Leaf = cmp.Or(o.Leaf, DefaultLeaf)
	return func(ctx context.Context, r *LeafRound) ([]*KNNPart, error) {
		return opt.LeafRound(ctx, x, n, p, o, r)
	}
}

// loadBound returns row i's bound.
func (a *approxSearch) loadBound(i int) float64 { return loadBound(a.bound, i) }

// searchByParts runs a round of leaf pairs where the lists are in a file,
// which search would reach at random, a tile's offers going to the lists
// of two leaves anywhere, and returns the number of rows whose list
// changed and of parts. The leaves are cut into runs, parts, whose lists
// fit in the scratch memory left (partLeaves). For each part in turn, the
// tiles that meet it are screened with only its rows offered to, into its
// lists in memory, which are then merged into the file's in one pass: the
// file's lists are read and written once, in order. A tile between two
// parts is screened by both. The lists and the count are search's: the
// best m of a set of offers do not depend on their order, a row's list
// changes if and only if an offer enters it, and a pair farther than a
// row's bound at the round's start cannot enter its list.
func (a *approxSearch) searchByParts(ctx context.Context, tiles []tilePair) (changed, parts int, err error) {
	leaves := a.partLeaves()
	lists, bound, sc, err := bestIn(a.sp, min(a.n, leaves*a.bs), a.m)
	if err != nil {
		return 0, 0, err
	}
	defer sc.Release()
	own := newPartLists(lists, bound, a.lists.id)
	byPart := make([][]tilePair, (a.nb+leaves-1)/leaves) // by part, the tiles that meet it, in order
	total := 0
	for _, t := range tiles {
		p, q := int(t.I)/leaves, int(t.J)/leaves
		byPart[p], total = append(byPart[p], t), total+1
		if q != p {
			byPart[q], total = append(byPart[q], t), total+1
		}
	}
	clear(a.changed)
	pass := fmt.Sprintf("kNN round %d", a.round)
	if len(a.files) > 0 {
		defer adviseRandom(a.files...)()
	}
	done := 0
	for q, part := range byPart {
		lo, hi := q*leaves*a.bs, min(a.n, (q+1)*leaves*a.bs)
		own.start(lo, hi, a.loadBound)
		ts := &tileScreen{pairs: a.pairs, workers: a.workers, bound: own.threshold, offer: own.offer,
			tileAt: func(t int) (int, int) { return int(part[t].I), int(part[t].J) }}
		if a.progress != nil {
			ts.progress = func(d int) { a.progress(pass, done+d, total) }
		}
		if len(a.files) > 0 {
			ts.ahead = func(t int) { a.prefetch(int(part[t].I), int(part[t].J)) }
		}
		if err := ts.run(ctx, len(part)); err != nil {
			return 0, 0, err
		}
		done += len(part)
		for i := lo; i < hi; i++ {
			if a.lists.merge(i, own.lists, i-lo) {
				a.changed[i] = true
				storeBound(a.bound, i, a.lists.bound(i))
			}
		}
	}
	return a.countChanged(), len(byPart), nil
}

// partLeaves returns the leaves of a part of a round run by parts: those
// whose lists and bounds fit in the scratch memory left, or in
// minPartBytes if less is left (a file then, whose pages stay in the page
// cache over the part), or KNNOptions.partRows' in tests; at least one.
func (a *approxSearch) partLeaves() int {
	rows := a.partRows
	if rows == 0 {
		rows = int(max(a.sp.Left(), minPartBytes)/int64(12*a.m+12)) - 1 // bestIn's rounding
		return max(1, rows/a.bs)
	}
	return max(1, (rows+a.bs-1)/a.bs)
}

// minPartBytes is the least memory of a part's lists (partLeaves).
const minPartBytes = 32 << 20
