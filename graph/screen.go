package graph

import (
	"context"
	"sync"

	"github.com/ssnmf/ssnmf/tile"
)

// tileScreen runs the tiles of a search on workers goroutines, each tile's
// pairs offered straight to the rows' lists (offer, under the rows' locks
// in the caller): the one loop of the exact search and of the approximate
// search's leaf rounds. The best m of a set of offers do not depend on
// their order, so the lists do not depend on the workers or the timing; a
// tile reads the bounds as they are when it starts and as its own offers
// lower them, which only prunes less than the final bounds would.
type tileScreen struct {
	pairs   *tile.Pairs
	workers int
	// tileAt returns the blocks of tile t; skip, if not nil, reports a
	// tile with nothing to find.
	tileAt func(t int) (I, J int)
	skip   func(I, J int) bool
	// bound returns a row's threshold when a tile starts: pairs farther
	// than it are not offered to the row.
	bound func(row int) float64
	// offer offers row other at squared distance d to row's list and
	// returns the list's bound; take, if not nil, says whether the pair
	// of rows i < j is offered at all.
	offer func(row, other int, d float64) float64
	take  func(i, j int) bool
	// progress, if not nil, is called after each tile with the number of
	// tiles done, in increasing order.
	progress func(done int)
	// ahead, if not nil, is called with tile t+aheadTiles as tile t
	// starts, to ask for the pages it will read (prefetch).
	ahead func(t int)
}

// aheadTiles is how many tiles ahead tileScreen.ahead asks for pages.
const aheadTiles = 8

// run screens tiles [0, tiles).
func (s *tileScreen) run(ctx context.Context, tiles int) error {
	_, edge := s.pairs.Rows(0) // the largest block
	type task struct {
		rm, cm  []float64
		scratch *tile.PairScratch
	}
	tasks := make(chan *task, max(1, s.workers))
	for range cap(tasks) {
		tasks <- &task{rm: make([]float64, edge), cm: make([]float64, edge), scratch: s.pairs.NewScratch()}
	}
	var mu sync.Mutex // orders the progress calls
	done := 0
	return parallel(ctx, s.workers, tiles, func(t int) {
		tk := <-tasks
		defer func() { tasks <- tk }()
		if s.ahead != nil {
			if t == 0 {
				for u := range min(aheadTiles, tiles) {
					s.ahead(u)
				}
			}
			if t+aheadTiles < tiles {
				s.ahead(t + aheadTiles)
			}
		}
		if I, J := s.tileAt(t); s.skip == nil || !s.skip(I, J) {
			s.screen(tk.scratch, I, J, tk.rm, tk.cm)
		}
		if s.progress != nil {
			mu.Lock()
			done++
			s.progress(done)
			mu.Unlock()
		}
	})
}

// screen offers the pairs of tile (I, J), with rm and cm as the
// thresholds of its rows and columns.
func (s *tileScreen) screen(scratch *tile.PairScratch, I, J int, rm, cm []float64) {
	r0, r1 := s.pairs.Rows(I)
	c0, c1 := s.pairs.Rows(J)
	rm, cm = rm[:r1-r0], cm[:c1-c0]
	for i := range rm {
		rm[i] = s.bound(r0 + i)
	}
	for j := range cm {
		cm[j] = s.bound(c0 + j)
	}
	s.pairs.Near(scratch, I, J, rm, cm, func(i, j int, d float64) {
		if s.take != nil && !s.take(i, j) {
			return
		}
		if li := i - r0; d <= rm[li] {
			rm[li] = s.offer(i, j, d)
		}
		if lj := j - c0; d <= cm[lj] {
			cm[lj] = s.offer(j, i, d)
		}
	})
}
