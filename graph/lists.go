package graph

import (
	"context"
	"math"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/ssnmf/ssnmf/internal/negexp"
	"github.com/ssnmf/ssnmf/store"
)

// best is the M best candidates of each of a set of rows, by (d², index),
// each row's sorted ascending.
type best struct {
	m   int
	d   []float64 // squared distances, m a row
	j   []int32   // their rows
	cnt []int32   // candidates held, at most m
	// id, if not nil, is the index by which ties in distance are broken:
	// row j ranks as id[j] (KNNOptions.Order, the input's row of a row in
	// the order of Partition), so that the lists are those of the rows in
	// the input's order.
	id []int32
	// md and mj are merge's buffer, m long once used.
	md []float64
	mj []int32
}

func newBest(rows, m int) *best {
	return &best{m: m, d: make([]float64, rows*m), j: make([]int32, rows*m), cnt: make([]int32, rows)}
}

func (b *best) reset(rows int) { clear(b.cnt[:rows]) }

// byRow moves the list held at position q to row order[q], for every q,
// in place: each cycle of the permutation is followed with one list in
// hand, swapped into the place of the next.
func (b *best) byRow(order []int32) {
	m := b.m
	done := make([]bool, len(order))
	d, j := make([]float64, m), make([]int32, m)
	for q0 := range order {
		if done[q0] {
			continue
		}
		copy(d, b.d[q0*m:(q0+1)*m])
		copy(j, b.j[q0*m:(q0+1)*m])
		c := b.cnt[q0]
		for q := q0; ; {
			t := int(order[q])
			for e := range m {
				d[e], b.d[t*m+e] = b.d[t*m+e], d[e]
				j[e], b.j[t*m+e] = b.j[t*m+e], j[e]
			}
			c, b.cnt[t] = b.cnt[t], c
			done[t] = true
			if q = t; q == q0 {
				break
			}
		}
	}
}

// copyRow makes row r's list a copy of src's row q, of as many candidates.
func (b *best) copyRow(r int, src *best, q int) {
	m := b.m
	copy(b.d[r*m:(r+1)*m], src.d[q*m:(q+1)*m])
	copy(b.j[r*m:(r+1)*m], src.j[q*m:(q+1)*m])
	b.cnt[r] = src.cnt[q]
}

// bound returns the distance of row r's m-th candidate, +Inf if it has
// fewer.
func (b *best) bound(r int) float64 {
	if int(b.cnt[r]) < b.m {
		return math.Inf(1)
	}
	return b.d[r*b.m+b.m-1]
}

// offer makes (d, j) a candidate of row r if it is among the best m and
// not one already, and reports whether it did. The place is found from the
// end of the list by distance alone, then among equal distances by row:
// a tight loop of one comparison, where most accepted offers land near the
// end once the list is full.
func (b *best) offer(r int, d float64, j int32) bool {
	m, c := b.m, int(b.cnt[r])
	ds, js := b.d[r*m:r*m+m], b.j[r*m:r*m+m]
	if c == m && !b.less(d, j, ds[m-1], js[m-1]) {
		return false
	}
	pos := c // the first candidate after (d, j)
	for pos > 0 && d < ds[pos-1] {
		pos--
	}
	for pos > 0 && ds[pos-1] == d && b.rowLess(j, js[pos-1]) {
		pos--
	}
	if pos > 0 && js[pos-1] == j && ds[pos-1] == d {
		return false // offered before
	}
	if c < m {
		c++
		b.cnt[r] = int32(c)
	}
	copy(ds[pos+1:c], ds[pos:c-1])
	copy(js[pos+1:c], js[pos:c-1])
	ds[pos], js[pos] = d, j
	return true
}

// merge makes the candidates of src's row q candidates of row r as offer
// would, one by one, and reports whether row r's list changed: the two
// sorted lists are merged into the best m of their union (an entry in
// both counted once), in one pass instead of an insertion each; src must
// break ties by the same rows' order (id) as b. Its buffer is b's: merges
// into one best must not run concurrently.
func (b *best) merge(r int, src *best, q int) bool {
	m, c, cs := b.m, int(b.cnt[r]), int(src.cnt[q])
	ds, js := b.d[r*m:r*m+c], b.j[r*m:r*m+c]
	sd, sj := src.d[q*src.m:q*src.m+cs], src.j[q*src.m:q*src.m+cs]
	if cs == 0 || c == m && !b.less(sd[0], sj[0], ds[m-1], js[m-1]) {
		return false // none of src's is better than the worst held
	}
	if b.md == nil {
		b.md, b.mj = make([]float64, m), make([]int32, m)
	}
	od, oj := b.md[:0], b.mj[:0]
	changed := false
	for i, k := 0, 0; len(od) < m && (i < c || k < cs); {
		switch {
		case k == cs || i < c && b.less(ds[i], js[i], sd[k], sj[k]):
			od, oj = append(od, ds[i]), append(oj, js[i])
			i++
		case i < c && ds[i] == sd[k] && js[i] == sj[k]:
			od, oj = append(od, ds[i]), append(oj, js[i])
			i, k = i+1, k+1
		default:
			od, oj = append(od, sd[k]), append(oj, sj[k])
			k++
			changed = true
		}
	}
	if changed {
		b.cnt[r] = int32(len(od))
		copy(b.d[r*m:], od)
		copy(b.j[r*m:], oj)
	}
	return changed
}

// less orders candidates by distance, then by row (rowLess): a strict
// total order, so that the best m do not depend on the order of the
// offers.
func (b *best) less(d1 float64, j1 int32, d2 float64, j2 int32) bool {
	if d1 != d2 {
		return d1 < d2
	}
	return b.rowLess(j1, j2)
}

// rowLess orders rows by index, or by b.id of the row if set.
func (b *best) rowLess(j1, j2 int32) bool {
	if b.id != nil {
		return b.id[j1] < b.id[j2]
	}
	return j1 < j2
}

// graph symmetrizes the neighbour lists into P = W ∘ (C + Cᵀ)/2, in memory
// or in the CSR file path, tagged source, on workers goroutines (the same
// bits for any number). The reverse halves of the edges go through scratch
// memory from sp (see store.Scratch), bucketed by ranges of rows. Every row
// of P merges two lists sorted by column, its own (sorted here) and its
// reverse ones (added in the order of their rows), the two halves of a
// mutual edge added up: a first pass counts each row's entries, a second
// writes them where they belong, so the file is made at its length and
// each of its pages is written once, in ranges of rows. It consumes b: its
// distances become the edges' half weights, its lists are sorted by row.
func (b *best) graph(w Weights, path string, source uint64, sp *store.ScratchSpace, workers int) (*CSR, error) {
	// The lists are read six times in order and written once: for the
	// entries of each row and the scales, to weigh and sort them, to
	// bucket their reverse halves (to count, then to place), and to merge
	// them with those (to count, then to write).
	sigma, count, err := b.scalesAndCounts(w == SelfTuning, workers)
	if err != nil {
		return nil, err
	}
	if err := b.weighByRow(sigma, workers); err != nil {
		return nil, err
	}
	rev, err := newReverse(b, count, sp, workers)
	if err != nil {
		return nil, err
	}
	defer rev.sc.Release()
	if err := rev.fill(b, workers); err != nil {
		return nil, err
	}
	// count becomes the entries of each row once its lists are merged.
	err = rev.eachRow(workers, func(i int, in []revEntry) { count[i] = b.mergeRow(i, in, nil, nil) })
	if err != nil {
		return nil, err
	}
	es, err := newEntries(count, path, source, workers)
	if err != nil {
		return nil, err
	}
	err = rev.eachRow(workers, func(i int, in []revEntry) {
		lo := es.rowPtr[i]
		b.mergeRow(i, in, es.col[lo:es.rowPtr[i+1]], es.val[lo:])
	})
	if err != nil { // a fault of a mapping (fault.Guard)
		es.abort()
		return nil, err
	}
	return es.sorted()
}

// mergeRow merges row i's own list, sorted by row, and its reverse
// entries in, sorted by column, into row i of P: a column in both gets the
// sum of its halves. It writes the entries to col and val unless col is
// nil, and returns how many there are.
func (b *best) mergeRow(i int, in []revEntry, col []int32, val []float64) int64 {
	js := b.j[i*b.m : i*b.m+int(b.cnt[i])]
	ds := b.d[i*b.m:]
	var e, r, out int
	for e < len(js) || r < len(in) {
		var c int32
		var v float64
		switch {
		case r == len(in) || e < len(js) && js[e] < in[r].col:
			c, v = js[e], ds[e]
			e++
		case e == len(js) || in[r].col < js[e]:
			c, v = in[r].col, in[r].v
			r++
		default: // a mutual edge
			c, v = js[e], ds[e]+in[r].v
			e, r = e+1, r+1
		}
		if col != nil {
			col[out], val[out] = c, v
		}
		out++
	}
	return int64(out)
}

// weighByRow replaces every candidate's distance by half its edge's
// weight, 1/2, or, with the self-tuning scales sigma, exp(-d²/(σ_i σ_j))/2,
// and sorts every list by its rows (columns of P), on workers goroutines:
// one pass over the lists. Its error is a fault of a mapping (fault.Guard).
func (b *best) weighByRow(sigma []float64, workers int) error {
	n, m := len(b.cnt), b.m
	const chunk = 1 << 14 // rows a task
	return parallel(context.Background(), workers, (n+chunk-1)/chunk, func(t int) {
		for i := t * chunk; i < min(n, (t+1)*chunk); i++ {
			js, ds := b.j[i*m:i*m+int(b.cnt[i])], b.d[i*m:]
			for e, j := range js {
				v := 1.0
				if sigma != nil {
					v = negexp.Of(max(ds[e], 0) / (sigma[i] * sigma[j]))
				}
				ds[e] = v / 2
			}
			for e := 1; e < len(js); e++ { // insertion: m is small
				j, d, q := js[e], ds[e], e
				for ; q > 0 && js[q-1] > j; q-- {
					js[q], ds[q] = js[q-1], ds[q-1]
				}
				js[q], ds[q] = j, d
			}
		}
	})
}

// reverseBucketEntries bounds the reverse entries of a bucket, which are
// held on the heap while their rows are written (16 bytes each; one bucket
// a worker at a time).
const reverseBucketEntries = 1 << 20

// revEntry is a reverse half of an edge: row (of the CSR), col, value.
type revEntry struct {
	row, col int32
	v        float64
}

// reverse holds the reverse halves of the edges of a kNN graph by buckets
// of consecutive rows: bucket q holds the entries of the rows
// [first[q], first[q+1]), at [bucket[q], bucket[q+1]) of all.
type reverse struct {
	sc     *store.Scratch
	all    []revEntry
	first  []int32 // by bucket, its first row; then n
	bucket []int64 // by bucket, its first entry; then the total
	of     []int32 // by row, its bucket
}

// newReverse returns room for the reverse entries of b's lists, whose
// rows' entries in all are count (own ones included), in scratch memory
// from sp, cut into buckets of at most reverseBucketEntries entries (or of
// one row), and into at least 4·workers buckets where there are rows
// enough, so that every worker has buckets to take.
func newReverse(b *best, count []int64, sp *store.ScratchSpace, workers int) (*reverse, error) {
	n := len(count)
	r := &reverse{of: make([]int32, n)}
	var total, size int64
	for i := range n {
		total += count[i] - int64(b.cnt[i])
	}
	limit := min(reverseBucketEntries, max(1, total/int64(4*max(1, workers))))
	total = 0
	for i := range n {
		c := count[i] - int64(b.cnt[i])
		if i == 0 || size > 0 && size+c > limit {
			r.first = append(r.first, int32(i))
			r.bucket = append(r.bucket, total)
			size = 0
		}
		r.of[i] = int32(len(r.first) - 1)
		size += c
		total += c
	}
	r.first = append(r.first, int32(n))
	r.bucket = append(r.bucket, total)
	var err error
	if r.sc, err = sp.New(int(total) * int(unsafe.Sizeof(revEntry{}))); err != nil {
		return nil, err
	}
	r.all = store.Carve[revEntry](r.sc, new(int), int(total))
	return r, nil
}

// fill places the reverse half (j, i) of every entry (i, j) of b's lists
// in row j's bucket, each bucket's in the order of their rows i, on
// workers goroutines: the rows are cut into chunks, a first pass counts
// each chunk's entries by bucket, and a second writes them, each chunk's
// at its own place in each bucket. The result depends on neither the
// chunks nor the workers. Its error is a fault of a mapping (fault.Guard).
func (r *reverse) fill(b *best, workers int) error {
	n, m, buckets := len(b.cnt), b.m, len(r.first)-1
	size := max(fillRows, (n+8*workers-1)/(8*workers))
	chunks := (n + size - 1) / size
	at := make([]int64, chunks*buckets) // by chunk, then bucket
	each := func(f func(at []int64, i int, j int32, v float64)) func(int) {
		return func(c int) {
			at := at[c*buckets : (c+1)*buckets]
			for i := c * size; i < min(n, (c+1)*size); i++ {
				for e, j := range b.j[i*m : i*m+int(b.cnt[i])] {
					f(at, i, j, b.d[i*m+e])
				}
			}
		}
	}
	err := parallel(context.Background(), workers, chunks, each(func(at []int64, _ int, j int32, _ float64) {
		at[r.of[j]]++
	}))
	if err != nil {
		return err
	}
	for q := range buckets {
		next := r.bucket[q]
		for c := range chunks {
			next, at[c*buckets+q] = next+at[c*buckets+q], next
		}
	}
	return parallel(context.Background(), workers, chunks, each(func(at []int64, i int, j int32, v float64) {
		q := r.of[j]
		r.all[at[q]] = revEntry{row: j, col: int32(i), v: v}
		at[q]++
	}))
}

// fillRows is the fewest rows of a chunk of reverse.fill.
const fillRows = 256

// eachRow calls f with every row and its reverse entries, in the order
// they were added, on workers goroutines, a bucket of rows a task. Its
// error is a fault of a mapping (fault.Guard).
func (r *reverse) eachRow(workers int, f func(i int, in []revEntry)) error {
	return parallel(context.Background(), workers, len(r.first)-1, func(q int) {
		lo := int(r.first[q])
		for k, in := range r.rows(q) {
			f(lo+k, in)
		}
	})
}

// rows returns the entries of bucket q by row, from its first row on, in
// the order they were added.
func (r *reverse) rows(q int) [][]revEntry {
	lo, hi := int(r.first[q]), int(r.first[q+1])
	in := r.all[r.bucket[q]:r.bucket[q+1]]
	sorted := make([]revEntry, len(in))
	start := make([]int, hi-lo+1)
	for _, e := range in {
		start[int(e.row)-lo+1]++
	}
	for i := range hi - lo {
		start[i+1] += start[i]
	}
	at := slices.Clone(start[:hi-lo])
	for _, e := range in {
		sorted[at[int(e.row)-lo]] = e
		at[int(e.row)-lo]++
	}
	out := make([][]revEntry, hi-lo)
	for i := range out {
		out[i] = sorted[start[i]:start[i+1]]
	}
	return out
}

// scalesAndCounts returns, from one pass over the lists on workers
// goroutines, the entries each row of P gets before its lists are merged
// (its own, and one for every row that has it as a neighbour: every edge
// of C once from each end), and if selfTuning the self-tuning scales: the
// distance of each row to its SigmaNeighbor-th nearest other row, floored;
// else nil. Its error is a fault of a mapping (fault.Guard).
func (b *best) scalesAndCounts(selfTuning bool, workers int) ([]float64, []int64, error) {
	n, m := len(b.cnt), b.m
	count := make([]int64, n)
	var sigma []float64
	if selfTuning {
		sigma = make([]float64, n)
	}
	const chunk = 1 << 14 // rows a task
	err := parallel(context.Background(), workers, (n+chunk-1)/chunk, func(t int) {
		for i := t * chunk; i < min(n, (t+1)*chunk); i++ {
			atomic.AddInt64(&count[i], int64(b.cnt[i]))
			for _, j := range b.j[i*m : i*m+int(b.cnt[i])] {
				atomic.AddInt64(&count[j], 1)
			}
			if sigma != nil {
				e := min(SigmaNeighbor, int(b.cnt[i])-1) // entry 0 is the row itself
				sigma[i] = math.Sqrt(max(b.d[i*m+e], 0))
			}
		}
	})
	if err != nil || sigma == nil {
		return sigma, count, err
	}
	var pos []float64
	for _, s := range sigma {
		if s > 0 {
			pos = append(pos, s)
		}
	}
	floor := 1.0
	if len(pos) > 0 {
		slices.Sort(pos)
		floor = 1e-3 * pos[len(pos)/2]
	}
	for i, s := range sigma {
		sigma[i] = max(s, floor)
	}
	return sigma, count, nil
}

// bestIn returns empty lists of m candidates for rows rows, and the bounds
// of those rows (see approxSearch), in scratch memory from sp.
func bestIn(sp *store.ScratchSpace, rows, m int) (*best, []uint64, *store.Scratch, error) {
	size := rows*m*8 + (rows*m*4+7)&^7 + (rows*4+7)&^7 + rows*8
	s, err := sp.New(size)
	if err != nil {
		return nil, nil, nil, err
	}
	off := 0
	b := &best{m: m}
	b.d = store.Carve[float64](s, &off, rows*m)
	b.j = store.Carve[int32](s, &off, rows*m)
	b.cnt = store.Carve[int32](s, &off, rows)
	return b, store.Carve[uint64](s, &off, rows), s, nil
}

// loadBound and storeBound read and write a row's bound atomically.
func loadBound(w []uint64, i int) float64 {
	return math.Float64frombits(atomic.LoadUint64(&w[i]))
}

func storeBound(w []uint64, i int, v float64) {
	atomic.StoreUint64(&w[i], math.Float64bits(v))
}
