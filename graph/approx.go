package graph

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/ssnmf/ssnmf/internal/ordered"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
)

// Defaults of the approximate search (KNNOptions).
const (
	// DefaultLeaf is the number of rows of a leaf of the partition, the
	// block of the approximate search.
	DefaultLeaf = 512
	// DefaultProbes is the number of leaves searched with each leaf in
	// a round: its nearest leaves by centroid in the first, the leaves its
	// neighbours' neighbours fall in most often after.
	DefaultProbes = 32
	// DefaultRecall is the sampled recall@M at which the refinement stops.
	DefaultRecall = 0.99
	// DefaultRounds caps the rounds of a search, the first included.
	DefaultRounds = 10
	// minChanged is the fraction of the lists below which a round that
	// changed them ends the refinement: it has converged.
	minChanged = 1e-3
)

// approxSearch is the state of an approximate search: the rows, in the
// order of Partition, cut into blocks of bs rows; the candidate lists and
// their bounds, in scratch memory; and the pairs of blocks searched.
type approxSearch struct {
	x               []float64
	n, p, m, bs, nb int
	pairs           *tile.Pairs
	lists           *best
	bound           []uint64  // by row: the m-th candidate's distance, as bits
	partners        [][]int32 // by block: the blocks searched with it, ascending
	changed         []bool    // by row: the list changed in this round
	workers         int
	kernel          tile.ISA
	isa             tile.ISA // kernel resolved on this CPU (tile.ISAAuto if it lacks it: NewPairs refuses)
	progress        func(pass string, done, total int)
	probes, round   int
	rounds          int       // the most rounds
	ring            [][]int32 // by block: the blocks by centroid distance, nearest first
	// elsewhere, if not nil, runs the rounds of leaf pairs elsewhere
	// (KNNOptions.LeafRound; searchElsewhere).
	elsewhere func(context.Context, *LeafRound) ([]*KNNPart, error)
	// files holds the panels where they are mapped from a file: a leaf
	// round reads them at random, asking for each tile's pages ahead of it.
	files [][]byte
	// listsFile is the lists' scratch where it is mapped from a file.
	listsFile []byte
	// Where the lists are in a file, or partRows is not 0 (a part's rows,
	// in tests), the leaf rounds run by parts of the rows whose lists fit
	// in scratch memory from sp (searchByParts).
	sp       *store.ScratchSpace
	partRows int
}

// approxNeighbors finds about the m nearest rows of every row of x, itself
// first, by searching exactly the tiles of a sparse set of pairs of blocks
// (see KNN), and returns the lists (by row), the scratch that holds them,
// and what the search did.
func approxNeighbors(ctx context.Context, x []float64, n, p, m int, opt KNNOptions, sp *store.ScratchSpace) (*best, *store.Scratch, *KNNStats, error) {
	bs := min(cmp.Or(opt.Leaf, DefaultLeaf), n)
	a := &approxSearch{x: x, n: n, p: p, m: m, bs: bs, nb: (n + bs - 1) / bs, workers: max(1, opt.Workers),
		kernel: opt.Kernel, progress: opt.Progress, probes: cmp.Or(opt.Probes, DefaultProbes), rounds: cmp.Or(opt.Rounds, DefaultRounds)}
	a.elsewhere = leafRoundsElsewhere(x, n, p, opt)
	a.isa, _ = opt.Kernel.Resolve()
	var err error
	var sc *store.Scratch
	if a.lists, a.bound, sc, err = bestIn(sp, n, m); err != nil {
		return nil, nil, nil, err
	}
	a.lists.id = opt.Order // ties go to the lower input row
	if sc.Where() == "file" {
		a.listsFile = sc.Mem
	}
	a.sp, a.partRows = sp, opt.partRows
	fail := func(err error) (*best, *store.Scratch, *KNNStats, error) {
		sc.Release()
		return nil, nil, nil, err
	}
	if a.pairs, err = tile.NewPairs(x, n, p, bs, opt.Kernel); err != nil {
		return fail(err)
	}
	// The vector kernel's panels, as large as the features, go to the
	// scratch directory too.
	var panels *store.Scratch
	defer func() {
		if panels != nil {
			panels.Release()
		}
	}()
	a.pairs.Memory = func(size int) ([]byte, error) {
		var err error
		panels, err = sp.New(size)
		if err != nil {
			return nil, err
		}
		if panels.Where() == "file" {
			a.files = append(a.files, panels.Mem)
		}
		return panels.Mem, nil
	}
	if err := a.pairs.Pack(a.workers); err != nil {
		return fail(err)
	}
	if err := a.seedBounds(ctx); err != nil {
		return fail(err)
	}
	a.partners = make([][]int32, a.nb)
	a.changed = make([]bool, n)
	st := &KNNStats{Method: Approximate, Leaves: a.nb, Leaf: bs, Recall: math.NaN(), Kernel: a.pairs.Kernel()}
	ref, err := newRecallSample(ctx, x, n, p, m, opt.sampleRows(n), opt.Seed, a.workers, opt.Kernel)
	if err != nil {
		return fail(err)
	}
	target, rounds := cmp.Or(opt.Recall, DefaultRecall), a.rounds
	var desc *descent
	defer func() {
		if desc != nil {
			desc.sc.Release()
		}
	}()
	tiles, err := a.firstTiles(ctx)
	for descend := false; err == nil && (descend || len(tiles) > 0); {
		var r KNNRound
		var changed int
		a.round = len(st.Rounds) + 1 // the progress lines' count of rounds of either kind
		if descend {
			if desc == nil {
				if desc, err = newDescent(a, sp, cmp.Or(opt.DescentForward, DefaultDescentForward), cmp.Or(opt.DescentReverse, DefaultDescentReverse)); err != nil {
					break
				}
				desc.joinRows, desc.chunk = opt.descentBuffers()
				desc.rangeRows, desc.chunk = cmp.Or(opt.backwardRange, desc.rangeRows), cmp.Or(opt.backwardChunk, desc.chunk)
				desc.full = opt.fullForward
				if wo, wr := opt.spillWindows(sc, m, sp.Left()); wo > 0 {
					desc.offers = newSpill[joinOffer](sp, "kNN descent's offers", wo, n)
					desc.reverses = newSpill[reverseEntry](sp, "kNN descent's reverse candidates", wr, n)
				}
				if opt.spillWindow > 0 { // more than one chunk and piece in a small test
					desc.joinRows = opt.spillWindow
					desc.offers.SetPiece(1000)
					desc.reverses.SetPiece(1000)
				}
			}
			changed, err = desc.round(ctx)
			r.Descent, r.Spilled = true, desc.spilled
		} else {
			changed, r.Parts, err = a.search(ctx, tiles)
			r.Tiles = len(tiles)
		}
		if err != nil {
			break
		}
		r.Changed, r.Recall = float64(changed)/float64(n), ref.recall(a.lists)
		st.Rounds = append(st.Rounds, r)
		st.Tiles += r.Tiles
		st.Recall, st.RecallRows = r.Recall, len(ref.rows)
		if opt.Round != nil {
			opt.Round(len(st.Rounds), r)
		}
		if r.Recall >= target || math.IsNaN(r.Recall) && r.Changed < minChanged && !r.Descent || len(st.Rounds) >= rounds {
			break
		}
		// Leaf rounds first; then, if asked for, neighbour descent once
		// they slow down, until it slows down too, when a round of leaf
		// pairs brings rows that no list leads to.
		after := opt.leafRounds()
		descend = after > 0 && len(st.Rounds) >= after && a.descend(st.Rounds)
		if !descend {
			tiles, err = a.nextTiles(ctx)
		}
	}
	if err != nil {
		return fail(err)
	}
	return a.lists, sc, st, nil
}

// descend reports whether the round after rounds should be one of
// neighbour descent: after a round of leaf pairs, if it cut the sampled
// misses (1 - recall) less than leafGain-fold (or the recall is not
// measured); after a round of descent, if it cut them at least
// descentGain-fold and changed at least descentSettled of the lists.
func (a *approxSearch) descend(rounds []KNNRound) bool {
	k := len(rounds)
	r := rounds[k-1]
	if r.Descent && r.Changed < descentSettled {
		return false
	}
	if k < 2 || math.IsNaN(r.Recall) {
		return !r.Descent
	}
	cut := (1 - rounds[k-2].Recall) / (1 - r.Recall) // +Inf at recall 1
	if r.Descent {
		return cut >= descentGain
	}
	return cut < leafGain
}

// seedBounds starts every row's list with itself, and its bound at that
// of its (m-1)-th nearest other row of its leaf (tile.Pairs.Within): an
// upper bound of its m-th candidate's distance once the leaf is searched
// with itself, which prunes the first round's tiles from their start.
// Rows near each other in the leaf's projection order, which seeded the
// lists before, gave looser bounds: at 10⁶ rows the first round offered
// 136 million candidates, 82 million with these (9.7 s against 12.8).
// A pair beyond both of its rows' bounds is beyond their m-th candidates
// after the round, so the lists are the same.
func (a *approxSearch) seedBounds(ctx context.Context) error {
	type seeder struct {
		s      *tile.PairScratch
		within []float64
	}
	seeders := make(chan *seeder, a.workers)
	for range a.workers {
		seeders <- &seeder{s: a.pairs.NewScratch(), within: make([]float64, a.bs)}
	}
	return parallel(ctx, a.workers, a.nb, func(I int) {
		sd := <-seeders
		defer func() { seeders <- sd }()
		lo, hi := a.pairs.Rows(I)
		within := sd.within[:hi-lo]
		for i := lo; i < hi; i++ {
			a.lists.offer(i, -1, int32(i))
			within[i-lo] = a.lists.bound(i) // the bound of a list of one
		}
		if a.m >= 2 {
			a.pairs.Within(sd.s, I, a.m-1, within)
		}
		for i := lo; i < hi; i++ {
			storeBound(a.bound, i, within[i-lo])
		}
	})
}

// tilePair is a tile of the search: blocks I <= J.
type tilePair struct{ I, J int32 }

// firstTiles returns the tiles of the first round: each block with its
// probes nearest blocks by centroid (itself first), found by the exact
// search on the centroids.
func (a *approxSearch) firstTiles(ctx context.Context) ([]tilePair, error) {
	p := a.p
	cent := LeafCentroids(a.x, a.n, p, a.bs)
	// Each round searches a block with probes more of its nearest blocks
	// by centroid, besides those neighbour descent finds, so that the
	// search reaches every block near a block in the end, whatever its
	// lists say.
	m := min(a.nb, a.probes*(a.rounds+1))
	near, _, err := neighbors(ctx, cent, a.nb, p, m, KNNOptions{Workers: a.workers, Kernel: a.kernel}, 0, 1)
	if err != nil {
		return nil, err
	}
	a.ring = make([][]int32, a.nb)
	var tiles []tilePair
	for I := range a.nb {
		a.ring[I] = slices.Clone(near.j[I*m : I*m+int(near.cnt[I])])
		for _, J := range a.nextRing(I, a.probes) {
			tiles = append(tiles, tilePair{min(int32(I), J), max(int32(I), J)})
		}
	}
	return a.take(tiles), nil
}

// nextRing returns the next k blocks of block I's ring not yet searched
// with it, dropping them from the ring.
func (a *approxSearch) nextRing(I, k int) []int32 {
	var out []int32
	ring := a.ring[I]
	for len(ring) > 0 && len(out) < k {
		if _, found := slices.BinarySearch(a.partners[I], ring[0]); !found {
			out = append(out, ring[0])
		}
		ring = ring[1:]
	}
	a.ring[I] = ring
	return out
}

// take sorts the tiles, drops repeats and those searched before, records
// the rest as searched and returns them.
func (a *approxSearch) take(tiles []tilePair) []tilePair {
	// By block, each with itself first: a block's lists and panel stay in
	// cache over its tiles. Its rows' bounds are finite from the start
	// (seedBounds), so no tile waits on another's to prune.
	slices.SortFunc(tiles, func(s, t tilePair) int { return cmp.Or(cmp.Compare(s.I, t.I), cmp.Compare(s.J, t.J)) })
	tiles = slices.Compact(tiles)
	out := tiles[:0]
	for _, t := range tiles {
		if _, found := slices.BinarySearch(a.partners[t.I], t.J); found {
			continue
		}
		out = append(out, t)
	}
	for _, t := range out {
		a.partners[t.I] = append(a.partners[t.I], t.J)
		if t.I != t.J {
			a.partners[t.J] = append(a.partners[t.J], t.I)
		}
	}
	for I := range a.partners {
		slices.Sort(a.partners[I])
	}
	return out
}

// blockCount is a block and how many list entries point into it.
type blockCount struct {
	J   int32
	cnt int32
}

// nextTiles returns the tiles of a refinement round: for each block I,
// the probes blocks not yet searched with it that are reached most often
// in two steps of the block graph, whose edge I→J counts the entries of
// I's lists that are rows of J. They are the blocks of the neighbours of
// I's rows' neighbours: neighbour descent, a block at a time.
func (a *approxSearch) nextTiles(ctx context.Context) ([]tilePair, error) {
	// The block graph, each block's edges by J.
	out := make([][]blockCount, a.nb)
	const chunk = 64
	err := ordered.Run(ctx, a.workers, (a.nb+chunk-1)/chunk,
		func() []int32 { return make([]int32, a.nb) },
		func(_ context.Context, t int, count []int32) error {
			for I := t * chunk; I < min(a.nb, (t+1)*chunk); I++ {
				out[I] = a.blockEdges(I, count)
			}
			return nil
		},
		func(int, []int32) error { return nil })
	if err != nil {
		return nil, err
	}
	next := make([][]tilePair, (a.nb+chunk-1)/chunk)
	err = ordered.Run(ctx, a.workers, len(next),
		func() []int64 { return make([]int64, a.nb) },
		func(_ context.Context, t int, score []int64) error {
			next[t] = next[t][:0]
			for I := t * chunk; I < min(a.nb, (t+1)*chunk); I++ {
				for _, L := range slices.Concat(a.twoHop(I, out, score), a.nextRing(I, a.probes)) {
					next[t] = append(next[t], tilePair{min(int32(I), L), max(int32(I), L)})
				}
			}
			return nil
		},
		func(int, []int64) error { return nil })
	if err != nil {
		return nil, err
	}
	return a.take(slices.Concat(next...)), nil
}

// blockEdges returns the edges of block I of the block graph, using count
// (nb long, zero) as scratch and leaving it zero.
func (a *approxSearch) blockEdges(I int, count []int32) []blockCount {
	var edges []blockCount
	lo, hi := I*a.bs, min(a.n, (I+1)*a.bs)
	for i := lo; i < hi; i++ {
		for e := range int(a.lists.cnt[i]) {
			J := a.lists.j[i*a.m+e] / int32(a.bs)
			if count[J] == 0 {
				edges = append(edges, blockCount{J: J})
			}
			count[J]++
		}
	}
	for q := range edges {
		edges[q].cnt = count[edges[q].J]
		count[edges[q].J] = 0
	}
	slices.SortFunc(edges, func(s, t blockCount) int { return cmp.Compare(s.J, t.J) })
	return edges
}

// twoHop returns the probes blocks L not yet searched with block I of
// the largest two-step weight Σ_J count(I→J)·count(J→L), ties to the
// lower L, using score (nb long, zero) as scratch and leaving it zero.
func (a *approxSearch) twoHop(I int, edges [][]blockCount, score []int64) []int32 {
	var cand []int32
	for _, e := range edges[I] {
		for _, f := range edges[e.J] {
			if score[f.J] == 0 {
				cand = append(cand, f.J)
			}
			score[f.J] += int64(e.cnt) * int64(f.cnt)
		}
	}
	type scored struct {
		L int32
		s int64
	}
	ranked := make([]scored, 0, len(cand))
	for _, L := range cand {
		if _, found := slices.BinarySearch(a.partners[I], L); !found {
			ranked = append(ranked, scored{L, score[L]})
		}
		score[L] = 0
	}
	slices.SortFunc(ranked, func(s, t scored) int { return cmp.Or(cmp.Compare(t.s, s.s), cmp.Compare(s.L, t.L)) })
	var best []int32
	for _, r := range ranked[:min(len(ranked), a.probes)] {
		best = append(best, r.L)
	}
	return best
}

// search screens the tiles on the workers (tileScreen), each offering its
// pairs straight to the lists of both of its blocks under their rows'
// locks (offer), and returns the number of rows whose list changed and
// the parts it ran by (searchByParts; 0 at once).
func (a *approxSearch) search(ctx context.Context, tiles []tilePair) (changed, parts int, err error) {
	switch {
	case a.elsewhere != nil:
		changed, err = a.searchElsewhere(ctx, tiles)
		return changed, 0, err
	case a.listsFile != nil || a.partRows > 0:
		return a.searchByParts(ctx, tiles)
	}
	clear(a.changed)
	pass := fmt.Sprintf("kNN round %d", a.round)
	var locks [joinLocks]sync.Mutex
	ts := &tileScreen{pairs: a.pairs, workers: a.workers,
		tileAt: func(t int) (int, int) { return int(tiles[t].I), int(tiles[t].J) },
		bound:  a.loadBound,
		offer:  func(row, other int, d float64) float64 { return a.offer(int32(row), d, int32(other), &locks) },
	}
	if a.progress != nil {
		ts.progress = func(done int) { a.progress(pass, done, len(tiles)) }
	}
	if len(a.files) > 0 {
		defer adviseRandom(a.files...)()
		ts.ahead = func(t int) { a.prefetch(int(tiles[t].I), int(tiles[t].J)) }
	}
	err = ts.run(ctx, len(tiles))
	return a.countChanged(), 0, err
}

// countChanged returns the number of rows whose list changed.
func (a *approxSearch) countChanged() int {
	changed := 0
	for _, c := range a.changed {
		if c {
			changed++
		}
	}
	return changed
}

// adviseRandom advises mapped memory as read at random, without the
// read-ahead around each fault, and returns the function that takes the
// advice back.
func adviseRandom(mem ...[]byte) func() {
	for _, b := range mem {
		_ = store.AdviseRandom(b) // advice: a refusal changes nothing
	}
	return func() {
		for _, b := range mem {
			_ = store.AdviseNormal(b)
		}
	}
}

// prefetch asks for the pages that screening tile (I, J) reads.
func (a *approxSearch) prefetch(I, J int) {
	a.pairs.TileMemory(I, J, func(b []byte) { _ = store.Prefetch(b) }) // advice: a refusal changes nothing
}

// offer offers (dist, v) to row u's list under u's lock (of locks, row u's
// being u mod joinLocks), marks the row changed if the list took it, and
// returns the list's bound.
func (a *approxSearch) offer(u int32, dist float64, v int32, locks *[joinLocks]sync.Mutex) float64 {
	l := &locks[u%joinLocks]
	l.Lock()
	b := loadBound(a.bound, int(u))
	if a.lists.offer(int(u), dist, v) {
		a.changed[u] = true
		b = min(b, a.lists.bound(int(u)))
		storeBound(a.bound, int(u), b)
	}
	l.Unlock()
	return b
}
