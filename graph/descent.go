package graph

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/ssnmf/ssnmf/internal/ordered"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
)

// Defaults of the approximate search's point-level refinement.
const (
	// DefaultLeafRounds is the least number of rounds of leaf pairs
	// before neighbour descent. At n = 10⁶ the leaf rounds keep cutting
	// the misses fast enough that descent never starts; at 10⁷ they slow
	// to 1.2- to 1.5-fold a round and stopped at recall 0.958 after 10,
	// where descent took the search to 0.99 (docs/knn.md).
	DefaultLeafRounds = 2
	// leafGain is the factor by which a round of leaf pairs must cut the
	// sampled misses (1 - recall) for the next to be one of leaf pairs
	// too, once KNNOptions.LeafRounds have run.
	leafGain = 2.5
	// DefaultDescentForward and DefaultDescentReverse are the candidates
	// of a row in neighbour descent: its nearest DefaultDescentForward
	// neighbours (all of its list, at the default M), and its
	// DefaultDescentReverse nearest reverse neighbours, by their rank in
	// their own lists. A row takes part in the local joins of the rows
	// whose candidates it is, so the reverse ones matter as much as the
	// forward: at 10⁶ rows 29 reverse candidates reached recall 0.988 in
	// three rounds where 15 reached 0.974 (docs/knn.md).
	DefaultDescentForward, DefaultDescentReverse = DefaultNeighbors - 1, DefaultNeighbors - 1
	// descentSettled is the share of the lists below which a round of
	// descent that changed them has settled: the next round searches
	// leaf pairs.
	descentSettled = 0.01
	// descentGain is the factor by which a round of descent must cut the
	// sampled misses (1 - recall) for the next to be one of descent too.
	descentGain = 1.5
)

// descent is the state of neighbour descent on the lists of an
// approximate search, row by row: each round, a row is offered the
// candidates of its candidates. A row's candidates are the nearest rows of
// its list and its nearest reverse neighbours (the rows whose lists hold
// it); an entry is new if it was not a candidate in the last round, and a
// pair of entries both old was tried then and is skipped.
type descent struct {
	a     *approxSearch
	width int     // candidates a row: fw forward, then reverse
	fwd   []int32 // by row, fw: a forward candidate v, ^v if new; none after the last
	rev   []int32 // by row, reverse: a reverse candidate, as fwd; the round's if filled
	prev  []int32 // by row, fw: the forward candidates of the last round, ascending, then -1
	rank  []uint8 // by row, reverse: a reverse candidate's rank in its own list
	// filled is by row whether its reverse candidates are this round's:
	// backward writes a row's when the first comes, rather than clearing
	// them all beforehand (out of core, a pass over their pages), and a
	// row given none has none.
	filled  []bool
	sc      *store.Scratch
	reverse int
	fw      int  // forward candidates a row: its nearest in its list
	last    int  // the round whose forward pass ran last; -1 none
	full    bool // forward takes no shortcut (the tests' reference)
	// rangeRows is the range of rows by which backward and join bucket
	// what goes to the rows, chunk backward's bound on the entries it
	// buckets at a time: backwardRange and backwardChunk, but in tests.
	rangeRows, chunk int
	// offers and reverses, if not nil, set aside the join's offers and
	// backward's entries that go to rows far from the rows at hand (the
	// lists are out of core); spilled is the bytes they set aside in the
	// last round.
	offers   *spill[joinOffer]
	reverses *spill[reverseEntry]
	spilled  int64
	// joinRows is the rows of a chunk of joins: joinRows, but in tests.
	joinRows int
}

// newDescent returns the state of neighbour descent on a's lists, with
// forward and reverse candidates a row, in scratch memory from sp:
// n·(8·forward + 5·reverse) bytes, and n bytes of heap (filled).
func newDescent(a *approxSearch, sp *store.ScratchSpace, forward, reverse int) (*descent, error) {
	fw := min(a.m-1, forward)
	width := fw + reverse
	size := (a.n*fw*4+7)&^7 + (a.n*reverse*4+7)&^7 + (a.n*fw*4+7)&^7 + (a.n*reverse+7)&^7
	sc, err := sp.New(size)
	if err != nil {
		return nil, err
	}
	off := 0
	d := &descent{a: a, width: width, sc: sc, reverse: reverse, fw: fw, last: -1, rangeRows: backwardRange, chunk: backwardChunk, joinRows: joinRows}
	d.fwd = store.Carve[int32](sc, &off, a.n*fw)
	d.rev = store.Carve[int32](sc, &off, a.n*reverse)
	d.filled = make([]bool, a.n)
	d.prev = store.Carve[int32](sc, &off, a.n*fw)
	d.rank = store.Carve[uint8](sc, &off, a.n*reverse)
	err = parallel(context.Background(), a.workers, (a.n+descentChunk-1)/descentChunk, func(t int) {
		prev := d.prev[t*descentChunk*fw : min(a.n, (t+1)*descentChunk)*fw]
		for i := range prev {
			prev[i] = -1
		}
	})
	if err != nil {
		sc.Release()
		return nil, err
	}
	return d, nil
}

// round runs one round of neighbour descent and returns the number of
// rows whose list changed.
func (d *descent) round(ctx context.Context) (int, error) {
	d.spilled = 0
	if err := d.forward(ctx); err != nil {
		return 0, err
	}
	if err := d.backward(ctx); err != nil {
		d.reverses.close()
		return 0, err
	}
	changed, err := d.join(ctx)
	if err != nil {
		d.offers.close()
	}
	return changed, err
}

// DescentBlock is the rows of a task of neighbour descent, the unit of its
// progress.
const DescentBlock = 4096

// DescentPass ends the name of a descent round's pass in the progress
// hook (KNNOptions.Progress), which counts blocks of DescentBlock rows.
const DescentPass = "neighbour descent"

// descentChunk is the rows of a task of neighbour descent.
const descentChunk = DescentBlock

// forward fills the first fw candidates of every row with the nearest
// rows of its list (itself left out), each flagged new unless it was one
// in the last round, and records them for the next.
func (d *descent) forward(ctx context.Context) error {
	a, fw := d.a, d.fw
	// A list that did not change in the last round, when that round was
	// this descent's, holds the candidates it recorded: all of them old,
	// and the record as it is.
	same := d.last == a.round-1 && !d.full
	d.last = a.round
	return parallel(ctx, a.workers, (a.n+descentChunk-1)/descentChunk, func(t int) {
		sorted := make([]int32, 0, fw)
		for i := t * descentChunk; i < min(a.n, (t+1)*descentChunk); i++ {
			c, prev := d.fwd[i*fw:(i+1)*fw], d.prev[i*fw:(i+1)*fw]
			if same && !a.changed[i] {
				d.unchanged(i, c)
				continue
			}
			sorted = sorted[:0]
			q, last := 0, prev[:prevLen(prev)]
			for e := range int(a.lists.cnt[i]) {
				v := a.lists.j[i*a.m+e]
				if int(v) == i || q == fw {
					continue
				}
				if _, old := slices.BinarySearch(last, v); old {
					c[q] = v
				} else {
					c[q] = ^v
				}
				sorted = append(sorted, v)
				q++
			}
			for ; q < fw; q++ {
				c[q] = none
			}
			slices.Sort(sorted)
			copy(prev, sorted)
			for r := len(sorted); r < fw; r++ {
				prev[r] = -1
			}
		}
	})
}

// unchanged fills the forward candidates c of row i, whose list did not
// change since the last round recorded them, as forward would: the nearest
// rows of its list, itself left out, all old.
func (d *descent) unchanged(i int, c []int32) {
	a, q := d.a, 0
	for e := range int(a.lists.cnt[i]) {
		if v := a.lists.j[i*a.m+e]; int(v) != i && q < d.fw {
			c[q] = v
			q++
		}
	}
	for ; q < d.fw; q++ {
		c[q] = none
	}
}

// prevLen returns the length of a row's recorded list, ended by -1.
func prevLen(prev []int32) int {
	if k := slices.Index(prev, -1); k >= 0 {
		return k
	}
	return len(prev)
}

// backward adds to every row's candidates its reverse neighbours of the
// lowest (rank in their list, row), at most reverse, each flagged as the
// forward entry it mirrors. The entries go to rows scattered over all, so
// they are taken a chunk of lists at a time (d.chunk entries at most),
// bucketed by ranges of d.rangeRows rows, and each range's
// entries added on the workers with the range's candidates in cache; out
// of core, those to rows far from the chunk are set aside until the
// chunks are done (spill). A row keeps the lowest keys of all it is
// offered, whatever their order: the result does not depend on the
// chunks, on the workers nor on what was set aside. A row's reverse
// candidates are written when the first comes (filled), not cleared
// beforehand.
func (d *descent) backward(ctx context.Context) error {
	a, fw, rr := d.a, d.fw, d.rangeRows
	if d.reverse == 0 {
		return nil
	}
	clear(d.filled)
	ranges := (a.n + rr - 1) / rr
	var bk buckets[uint64]
	add := func() error {
		return parallel(ctx, a.workers, ranges, func(q int) {
			for _, x := range bk.of(q) {
				d.addReverse(q*rr+int(x>>40), int32(uint32(x)), uint8(x>>32))
			}
		})
	}
	packed := func(r reverseEntry) uint64 {
		return uint64(int(r.u)%rr)<<40 | uint64(r.e)<<32 | uint64(uint32(r.v))
	}
	// A chunk's rows are cut into parts, counted and put on the workers;
	// those set aside go to the spill after each chunk, part by part.
	parts := 4 * a.workers
	aside := make([][]reverseEntry, parts)
	rows := max(1, d.chunk/max(1, fw))
	for lo := 0; lo < a.n; lo += rows {
		hi := min(a.n, lo+rows)
		step := (hi - lo + parts - 1) / parts
		bk.reset(parts, ranges)
		err := parallel(ctx, a.workers, parts, func(k int) {
			for i := lo + k*step; i < min(hi, lo+(k+1)*step); i++ {
				for e, v := range d.fwd[i*fw : (i+1)*fw] {
					if v == none {
						break
					}
					if r := d.reverseOf(i, e, v); d.reverses.near(r.u, lo, hi) {
						bk.count(k, int(r.u)/rr)
					}
				}
			}
		})
		if err != nil {
			return err
		}
		bk.layout()
		err = parallel(ctx, a.workers, parts, func(k int) {
			for i := lo + k*step; i < min(hi, lo+(k+1)*step); i++ {
				for e, v := range d.fwd[i*fw : (i+1)*fw] {
					if v == none {
						break
					}
					if r := d.reverseOf(i, e, v); d.reverses.near(r.u, lo, hi) {
						bk.put(k, int(r.u)/rr, packed(r))
					} else {
						aside[k] = append(aside[k], r)
					}
				}
			}
		})
		if err != nil {
			return err
		}
		for k, rs := range aside {
			for _, r := range rs {
				if err := d.reverses.Put(r); err != nil {
					return err
				}
			}
			aside[k] = rs[:0]
		}
		if err := add(); err != nil {
			return err
		}
	}
	spilled, err := d.reverses.take(func(piece []reverseEntry) error {
		bk.reset(1, ranges)
		for _, r := range piece {
			bk.count(0, int(r.u)/rr)
		}
		bk.layout()
		for _, r := range piece {
			bk.put(0, int(r.u)/rr, packed(r))
		}
		return add()
	})
	d.spilled += spilled
	return err
}

// reverseOf returns the reverse entry of forward candidate e of row i, v
// (^v if new).
func (d *descent) reverseOf(i, e int, v int32) reverseEntry {
	r := reverseEntry{u: v, v: int32(i), e: uint8(min(e, 255))}
	if v < 0 {
		r.u, r.v = ^v, ^int32(i)
	}
	return r
}

// reverseEntry is a reverse candidate of row u: row v (^v if new), of rank
// e in v's list.
type reverseEntry struct {
	u, v int32
	e    uint8
}

// Target returns the row the entry goes to (store.Targeted).
func (r reverseEntry) Target() int32 { return r.u }

// buckets groups items by range, a counting sort whose items come in
// parts that may be counted and put at once, each on one goroutine:
// reset, count every item of every part (count(k, q) for an item of part
// k in range q), layout, then put the same items (put(k, q, v)); of(q)
// holds range q's items, part 0's first, each part's in the order put.
type buckets[T any] struct {
	ranges int
	start  []int // by range, its first item; then the total
	at     []int // by part, then range: its count, then where its next item goes
	buf    []T
}

// reset empties the buckets for parts parts of items of ranges ranges.
func (b *buckets[T]) reset(parts, ranges int) {
	b.ranges = ranges
	b.start = slices.Grow(b.start[:0], ranges+1)[:ranges+1]
	b.at = slices.Grow(b.at[:0], parts*ranges)[:parts*ranges]
	clear(b.at)
}

// count counts an item of part k in range q.
func (b *buckets[T]) count(k, q int) { b.at[k*b.ranges+q]++ }

// layout makes room for the items counted.
func (b *buckets[T]) layout() {
	parts, total := len(b.at)/max(1, b.ranges), 0
	for q := range b.ranges {
		b.start[q] = total
		for k := range parts {
			c := b.at[k*b.ranges+q]
			b.at[k*b.ranges+q] = total
			total += c
		}
	}
	b.start[b.ranges] = total
	b.buf = slices.Grow(b.buf[:0], total)[:total]
}

// put places v, an item of part k in range q.
func (b *buckets[T]) put(k, q int, v T) {
	at := &b.at[k*b.ranges+q]
	b.buf[*at] = v
	*at++
}

// of returns the items of range q.
func (b *buckets[T]) of(q int) []T { return b.buf[b.start[q]:b.start[q+1]] }

// backwardRange is the rows of a range of backward's buckets, whose
// candidates (4·width + reverse bytes a row, 390 kB at the defaults) stay
// in a core's cache while its entries are added; at most 1<<24, for
// backward's packing. BenchmarkDescentBackward chose it: 1<<11 rows took
// 1.8–2.1 s where 1<<12 to 1<<14 took 2.3–2.7 s, and the unbucketed pass
// 3.7–5.1 s (2 vCPU AMD EPYC Zen 4).
const backwardRange = 1 << 11

// backwardChunk bounds the entries backward buckets at a time, 8 bytes
// each (128 MiB): the more, the more entries a range takes in a visit.
const backwardChunk = 1 << 24

// addReverse offers candidate v (^r if new) of rank e to row u's reverse
// candidates, which keep the lowest (rank, row); the first of the round
// fills them.
func (d *descent) addReverse(u int, v int32, e uint8) {
	c, rk := d.rev[u*d.reverse:(u+1)*d.reverse], d.rank[u*d.reverse:(u+1)*d.reverse]
	if !d.filled[u] {
		d.filled[u] = true
		c[0], rk[0] = v, e
		for q := 1; q < len(c); q++ {
			c[q] = none
		}
		return
	}
	row := func(v int32) int32 { return max(v, ^v) }
	key := func(e uint8, v int32) int64 { return int64(e)<<32 | int64(row(v)) }
	k := key(e, v)
	n := len(c) // the candidates held: a prefix of c, none after
	if c[n-1] == none {
		lo, hi := 0, n-1 // c[hi] is none; the first none is in [lo, hi]
		for lo < hi {
			if mid := int(uint(lo+hi) >> 1); c[mid] == none {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		n = lo
	}
	if n == len(c) && k >= key(rk[n-1], c[n-1]) {
		return
	}
	pos := n
	for pos > 0 && key(rk[pos-1], c[pos-1]) > k {
		pos--
	}
	if n < len(c) {
		n++
	}
	copy(c[pos+1:n], c[pos:n-1])
	copy(rk[pos+1:n], rk[pos:n-1])
	c[pos], rk[pos] = v, e
}

// none marks the end of a row's candidates: no row v nor ^v.
const none = math.MinInt32

// join runs the local join of every row: each pair of the row and its
// candidates of which at least one is new (the row itself counts as old)
// is measured once, and each of the two is offered to the other's list.
// A row's candidates are its list's nearest rows and its nearest reverse
// neighbours, so a row is offered the candidates of its candidates, as
// in NN-descent; but the rows of a join are loaded once, and their
// distances computed among them, where offering a row the candidates of
// its candidates one at a time would load each of them.
//
// The join is external: the offers of a chunk of joinRows rows' joins
// (on every worker) are gathered, bucketed by ranges of the rows they go
// to, and each range's offered to its lists on the workers, with the
// lists in cache and no lock. Out of core, those to rows far from the
// chunk are set aside until the joins are done (spill), and the features
// and bounds the next chunk's joins read are asked for before this one's
// run (joinAhead). The best m of a set of offers do not depend on their
// order, nor whether a list changed in the round, so the lists after the
// round do not depend on the workers, nor on what was set aside. It
// returns the number of rows whose list changed.
func (d *descent) join(ctx context.Context) (int, error) {
	a := d.a
	clear(a.changed)
	joiners := make(chan *joiner, a.workers)
	for range a.workers {
		joiners <- &joiner{seen: newRowSet(d.width + 1)}
	}
	blocks := (a.n + DescentBlock - 1) / DescentBlock
	pass := fmt.Sprintf("kNN round %d: %s", a.round, DescentPass)
	// A chunk's rows are cut into tasks for every worker, eight times
	// over: the workers wait for the chunk's last task to end.
	rows := d.joinRows
	step := max(joinMinTask, rows/(8*a.workers))
	var offers [][]joinOffer
	var bk buckets[joinOffer]
	reported := 0 // blocks done
	var ahead *joinAhead
	// Out of core, the lists near the chunk at hand, within half the
	// spill's window of it (spill.near), are held in near.
	var near *nearLists
	half := 0
	if d.offers != nil {
		ahead = newJoinAhead(a)
		defer adviseRandom(ahead.x, ahead.bound)()
		ahead.ask(d, 0, min(a.n, rows))
		half = d.offers.Window() / 2
		var err error
		if near, err = newNearLists(a.sp, a.lists, rows+2*half); err != nil {
			return 0, err
		}
		defer near.release()
	}
	for lo := 0; lo < a.n; lo += rows {
		hi := min(a.n, lo+rows)
		if ahead != nil && hi < a.n {
			ahead.ask(d, hi, min(a.n, hi+rows))
		}
		tasks := (hi - lo + step - 1) / step
		for len(offers) < tasks {
			offers = append(offers, nil)
		}
		err := parallel(ctx, a.workers, tasks, func(k int) {
			jn := <-joiners
			defer func() { joiners <- jn }()
			out := offers[k][:0]
			for i := lo + k*step; i < min(hi, lo+(k+1)*step); i++ {
				out = d.joinRow(i, jn, out)
			}
			offers[k] = out
		})
		if err == nil {
			err = d.offers.sift(offers[:tasks], lo, hi)
		}
		if err == nil {
			if near != nil {
				near.cover(max(0, lo-half), min(a.n, hi+half), a.changed)
			}
			err = offerBucketed(ctx, a, &bk, offers[:tasks], d.rangeRows, near)
		}
		if err != nil {
			return 0, err
		}
		if a.progress != nil {
			for ; reported < hi/DescentBlock || hi == a.n && reported < blocks; reported++ {
				a.progress(pass, reported+1, blocks)
			}
		}
	}
	if near != nil {
		near.flush(a.changed)
	}
	spilled, err := d.offers.take(func(piece []joinOffer) error {
		return offerBucketed(ctx, a, &bk, [][]joinOffer{piece}, d.rangeRows, nil)
	})
	if d.spilled += spilled; err != nil {
		return 0, err
	}
	return a.countChanged(), nil
}

// joinRows is the most rows whose joins' offers join gathers before it
// offers them (a multiple of DescentBlock); joinMinTask the fewest rows of
// a task of joins.
const (
	joinRows    = 4 * DescentBlock
	joinMinTask = 256
)

// joinOfferBytes is about the heap a row's joins' offers take in the
// first round of descent at the defaults, held twice while they are
// bucketed: 16,384 rows' took some 200 MB.
const joinOfferBytes = 12 << 10

// descentBuffers returns the rows of a chunk of joins and the entries
// backward buckets at a time: joinRows and backwardChunk, or fewer where
// the search's memory is small, so that neither buffer, on the heap, takes
// more than half of ScratchMemory (the budget's scratch share, a quarter
// of the budget; the heap has half). At 3·10⁶ rows in a 400 MiB cgroup,
// whose heap share of 210 MB held some 180 MB of O(n) arrays, the fixed
// buffers (200 MB of offers, 128 MiB of backward's entries) had the run
// killed for memory in descent's fifth round. Neither changes the lists:
// a row's list is the best m of all it is offered, in any order and any
// chunks.
func (opt KNNOptions) descentBuffers() (rows, chunk int) {
	rows, chunk = joinRows, backwardChunk
	if opt.ScratchMemory <= 0 {
		return rows, chunk
	}
	half := opt.ScratchMemory / 2
	rows = max(DescentBlock, min(rows, int(half/joinOfferBytes)/DescentBlock*DescentBlock))
	chunk = max(1<<20, min(chunk, int(half/8)))
	return rows, chunk
}

// candidates returns row i's forward and reverse candidates of the
// round, each ended by none if fewer than room.
func (d *descent) candidates(i int) (fwd, rev []int32) {
	fwd = d.fwd[i*d.fw : (i+1)*d.fw]
	if d.reverse > 0 && d.filled[i] {
		rev = d.rev[i*d.reverse : (i+1)*d.reverse]
	}
	return fwd, rev
}

// joinOffer is an offer of a local join: row v at squared distance dist
// to row u's list.
type joinOffer struct {
	u, v int32
	dist float64
}

// Target returns the row offered to (store.Targeted).
func (o joinOffer) Target() int32 { return o.u }

// offerBucketed offers every slice of offers, bucketed (bk) by ranges of
// rangeRows rows, to the rows' lists, a range's on a worker, and marks
// the rows whose list took one changed: the lists held in near, if not
// nil, else a's.
func offerBucketed(ctx context.Context, a *approxSearch, bk *buckets[joinOffer], offers [][]joinOffer, rangeRows int, near *nearLists) error {
	bk.reset(len(offers), (a.n+rangeRows-1)/rangeRows)
	err := parallel(ctx, a.workers, len(offers), func(k int) {
		for _, o := range offers[k] {
			bk.count(k, int(o.u)/rangeRows)
		}
	})
	if err != nil {
		return err
	}
	bk.layout()
	err = parallel(ctx, a.workers, len(offers), func(k int) {
		for _, o := range offers[k] {
			bk.put(k, int(o.u)/rangeRows, o)
		}
	})
	if err != nil {
		return err
	}
	return parallel(ctx, a.workers, bk.ranges, func(q int) {
		for _, o := range bk.of(q) {
			// An offer beyond the row's bound cannot enter its list: the
			// test that needs no line of the list.
			b := loadBound(a.bound, int(o.u))
			if o.dist > b {
				continue
			}
			lists, r := a.lists, int(o.u)
			if near != nil {
				lists, r = near.held, near.slot(r)
			}
			if lists.offer(r, o.dist, o.v) {
				a.changed[o.u] = true
				storeBound(a.bound, int(o.u), min(b, lists.bound(r)))
			}
		}
	})
}

// joinLocks is the number of locks that guard the lists in a local join,
// row r's being r mod joinLocks.
const joinLocks = 1 << 12

// joiner is a worker's scratch for local joins: the rows of a join, which
// of them are new, their features side by side and their bounds.
type joiner struct {
	seen  *rowSet
	rows  []int32
	fresh []bool
	x     []float64
	xt    []float64 // the features by columns: feature f of row q at xt[f*len(rows)+q]
	bound []float64
	with  []int32   // the partners of a row of the join, by position
	self  []int32   // that row's position, once for each partner
	dist  []float64 // their distances to it
}

// joinRow runs the local join of row i, and returns out with its offers
// appended: those not beyond the bound of their row's list as the join
// began.
func (d *descent) joinRow(i int, jn *joiner, out []joinOffer) []joinOffer {
	a, p := d.a, d.a.p
	if i+1 < a.n {
		fwd, rev := d.candidates(i + 1)
		for _, c := range [2][]int32{fwd, rev} {
			if len(c) > 0 {
				prefetchJoin(&a.x[0], 8*p, &a.bound[0], &c[0], len(c))
			}
		}
	}
	jn.seen.reset()
	jn.seen.add(int32(i))
	rows, fresh := append(jn.rows[:0], int32(i)), append(jn.fresh[:0], false)
	fwd, rev := d.candidates(i)
	for _, c := range [2][]int32{fwd, rev} {
		for _, v := range c {
			if v == none {
				break
			}
			u := max(v, ^v)
			if jn.seen.add(u) {
				rows, fresh = append(rows, u), append(fresh, v < 0)
			} else if v < 0 {
				fresh[slices.Index(rows, u)] = true
			}
		}
	}
	jn.rows, jn.fresh = rows, fresh
	if !slices.Contains(fresh, true) {
		return out
	}
	// The rows' features side by side (xs) and by columns (xt, with room
	// for SqDistsColumns' fastest reads).
	c := len(rows)
	xs := slices.Grow(jn.x[:0], c*p)[:c*p]
	xt := slices.Grow(jn.xt[:0], c*p+32)[:c*p+32]
	bound := slices.Grow(jn.bound[:0], c)[:c]
	jn.x, jn.xt, jn.bound = xs, xt, bound
	for q, u := range rows {
		row, xq := a.x[int(u)*p:int(u+1)*p], xs[q*p:(q+1)*p]
		for f, v := range row {
			xq[f], xt[f*c+q] = v, v
		}
		bound[q] = loadBound(a.bound, int(u))
	}
	for q1 := range rows {
		// The distances of q1 to its partners first: to all the later
		// rows by columns where q1 is new, else to the new ones among
		// them, four at a time; then the offers, in the partners' order.
		var dists []float64
		with, self := jn.with[:0], jn.self[:0]
		if fresh[q1] {
			dists = tile.SqDistsColumns(a.isa, jn.dist, xs[q1*p:(q1+1)*p], xt, c, q1+1, c)
		} else {
			for q2 := q1 + 1; q2 < c; q2++ {
				if fresh[q2] {
					with, self = append(with, int32(q2)), append(self, int32(q1))
				}
			}
			dists = tile.SqDistPairs(a.isa, jn.dist, xs, p, self, with)
		}
		jn.with, jn.self, jn.dist = with, self, dists
		for e, dist := range dists {
			q2 := q1 + 1 + e
			if !fresh[q1] {
				q2 = int(with[e])
			}
			if dist <= bound[q1] {
				out = append(out, joinOffer{rows[q1], rows[q2], dist})
			}
			if dist <= bound[q2] {
				out = append(out, joinOffer{rows[q2], rows[q1], dist})
			}
		}
	}
	return out
}

// rowSet is a set of rows, emptied in O(1): an open-addressed table whose
// slots hold the generation they were filled in.
type rowSet struct {
	key   []int32
	gen   []uint32
	now   uint32
	shift uint
}

// newRowSet returns a set for up to size rows, at most half full.
func newRowSet(size int) *rowSet {
	b := bits.Len(uint(2*size - 1))
	return &rowSet{key: make([]int32, 1<<b), gen: make([]uint32, 1<<b), shift: uint(32 - b)}
}

func (s *rowSet) reset() {
	if s.now++; s.now == 0 {
		clear(s.gen)
		s.now = 1
	}
}

// add adds v and reports whether it was not in the set.
func (s *rowSet) add(v int32) bool {
	mask := uint32(len(s.key) - 1)
	for h := (uint32(v) * 0x9e3779b1) >> s.shift; ; h = (h + 1) & mask {
		if s.gen[h] != s.now {
			s.gen[h], s.key[h] = s.now, v
			return true
		}
		if s.key[h] == v {
			return false
		}
	}
}

// parallel runs f(t) for t in [0, tasks) on workers goroutines
// (ordered.Each).
func parallel(ctx context.Context, workers, tasks int, f func(t int)) error {
	return ordered.Each(ctx, workers, tasks, f)
}
