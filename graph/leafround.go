package graph

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/ssnmf/ssnmf/internal/ordered"
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
	// The part's candidates, by row from lo; a row's threshold is the
	// lesser of its bound and its M-th candidate here.
	own := newBest(hi-lo, m)
	own.id = r.Order
	bound := make([]uint64, hi-lo)
	for i := range bound {
		storeBound(bound, i, r.Bounds[lo+i])
	}
	threshold := func(row int) float64 {
		if row < lo || row >= hi {
			return math.Inf(-1) // another part's row: never offered to
		}
		return loadBound(bound, row-lo)
	}
	err = ordered.Run(ctx, max(1, opt.Workers), len(tiles),
		func() *tileTask {
			tt := &tileTask{rows: newBest(bs, m), cols: newBest(bs, m),
				rowMax: make([]float64, bs), colMax: make([]float64, bs), scratch: pairs.NewScratch()}
			tt.rows.id, tt.cols.id = r.Order, r.Order
			return tt
		},
		func(_ context.Context, t int, tt *tileTask) error {
			tt.search(pairs, int(tiles[t].I), int(tiles[t].J), bs, threshold)
			return nil
		},
		func(_ int, tt *tileTask) error {
			for _, side := range []struct {
				b      *best
				lo, hi int
			}{{tt.rows, tt.r0, tt.r1}, {tt.cols, tt.c0, tt.c1}} {
				if side.lo < lo || side.lo >= hi {
					continue
				}
				for row := side.lo; row < side.hi; row++ {
					if s := row - lo; own.merge(s, side.b, row-side.lo) {
						storeBound(bound, s, min(r.Bounds[row], own.bound(s)))
					}
				}
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	kp := &KNNPart{M: m}
	for s := range hi - lo {
		if c := own.cnt[s]; c > 0 {
			kp.Rows = append(kp.Rows, int32(lo+s))
			kp.Count = append(kp.Count, c)
			kp.Dist = append(kp.Dist, own.d[s*m:(s+1)*m]...)
			kp.Index = append(kp.Index, own.j[s*m:(s+1)*m]...)
		}
	}
	return kp, nil
}

// search screens tile (I, J) of pairs into the task's candidates, with the
// thresholds that threshold gives for a row, lowered as the tile finds M
// candidates of its own for a row or column.
func (tt *tileTask) search(pairs *tile.Pairs, I, J, bs int, threshold func(row int) float64) {
	tt.r0, tt.r1 = pairs.Rows(I)
	tt.c0, tt.c1 = pairs.Rows(J)
	tt.rows.reset(bs)
	tt.cols.reset(bs)
	rm, cm := tt.rowMax[:tt.r1-tt.r0], tt.colMax[:tt.c1-tt.c0]
	for i := range rm {
		rm[i] = threshold(tt.r0 + i)
	}
	for j := range cm {
		cm[j] = threshold(tt.c0 + j)
	}
	pairs.Near(tt.scratch, I, J, rm, cm, func(i, j int, d float64) {
		if li := i - tt.r0; d <= rm[li] && tt.rows.offer(li, d, int32(j)) {
			rm[li] = min(rm[li], tt.rows.bound(li))
		}
		if lj := j - tt.c0; d <= cm[lj] && tt.cols.offer(lj, d, int32(i)) {
			cm[lj] = min(cm[lj], tt.cols.bound(lj))
		}
	})
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
	changed := 0
	for _, c := range a.changed {
		if c {
			changed++
		}
	}
	return changed, nil
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
