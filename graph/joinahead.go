package graph

import (
	"math/bits"
	"slices"

	"github.com/ssnmf/ssnmf/store"
)

// joinAhead asks, out of core, for the pages that a chunk of local joins
// will read, before the joins run: the features and the bounds of the
// rows and their candidates. The joins read them at random, a row here and
// a row there. Where the features are a mapped file larger than the
// memory left, a fault on one reads the pages around it as well (the
// device's read-ahead, up to megabytes), most in vain, and the pages that
// come in push out of the page cache those the joins still need. At 3·10⁶
// rows in a 400 MiB cgroup a round's joins so read 9.4 GB, 23 times the
// features and bounds. Advised as read at random (adviseRandom), with the
// next chunk's pages asked for (MADV_WILLNEED, which starts their reads
// and returns) while a chunk runs, they read 4.0 GB, and the offers that
// follow read 2.4 GB of lists where they read 4.2 (docs/knn.md).
type joinAhead struct {
	x     []byte         // the features, as mapped
	bound []byte         // the bounds
	rowX  int            // bytes of a row of features
	marks []uint64       // by page of x, then of bound: a bit set if asked for
	words []int          // the words of marks with a bit set
	xPage int            // pages of x: the first of bound's is xPage
	fetch func(b []byte) // asks for b's pages: store.Prefetch, but in tests
}

// aheadPage is the page by which joinAhead asks: 4 KiB.
const aheadPage = 4096

// newJoinAhead returns the asker of the pages of a's features and bounds.
func newJoinAhead(a *approxSearch) *joinAhead {
	x, bound := store.AsBytes(a.x), store.AsBytes(a.bound)
	xPages, bPages := (len(x)+aheadPage-1)/aheadPage, (len(bound)+aheadPage-1)/aheadPage
	return &joinAhead{x: x, bound: bound, rowX: 8 * a.p, xPage: xPages,
		marks: make([]uint64, (xPages+bPages+63)/64),
		fetch: func(b []byte) { _ = store.Prefetch(b) }} // advice: a refusal changes nothing
}

// ask asks for the pages that the joins of rows [lo, hi) read: each row's
// features and bound, and its candidates'.
func (ja *joinAhead) ask(d *descent, lo, hi int) {
	for i := lo; i < hi; i++ {
		ja.mark(i)
		fwd, rev := d.candidates(i)
		for _, c := range [2][]int32{fwd, rev} {
			for _, v := range c {
				if v == none {
					break
				}
				ja.mark(int(max(v, ^v)))
			}
		}
	}
	// Runs of pages marked, a gap of a page or two read with them: one
	// request each.
	const gap = 2
	slices.Sort(ja.words)
	start, end := -1, -1
	flush := func() {
		if start >= 0 {
			ja.request(start, end)
		}
	}
	for _, wd := range ja.words {
		for b := ja.marks[wd]; b != 0; b &= b - 1 {
			pg := wd*64 + bits.TrailingZeros64(b)
			if start >= 0 && pg <= end+gap && (pg < ja.xPage) == (start < ja.xPage) {
				end = pg + 1
				continue
			}
			flush()
			start, end = pg, pg+1
		}
		ja.marks[wd] = 0
	}
	flush()
	ja.words = ja.words[:0]
}

// mark marks the pages of row u's features and bound.
func (ja *joinAhead) mark(u int) {
	first, last := u*ja.rowX/aheadPage, ((u+1)*ja.rowX-1)/aheadPage
	for pg := first; pg <= last; pg++ {
		ja.set(pg)
	}
	ja.set(ja.xPage + 8*u/aheadPage)
}

// set marks page pg, noting its word the first time the word is marked.
func (ja *joinAhead) set(pg int) {
	wd, bit := pg/64, uint64(1)<<(pg%64)
	if ja.marks[wd] == 0 {
		ja.words = append(ja.words, wd)
	}
	ja.marks[wd] |= bit
}

// request asks for pages [from, to) of x, or of bound past xPage.
func (ja *joinAhead) request(from, to int) {
	mem, base := ja.x, 0
	if from >= ja.xPage {
		mem, base = ja.bound, ja.xPage
	}
	lo, hi := (from-base)*aheadPage, min(len(mem), (to-base)*aheadPage)
	if lo < hi {
		ja.fetch(mem[lo:hi])
	}
}
