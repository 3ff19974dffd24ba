package graph

import (
	"github.com/ssnmf/ssnmf/store"
)

// A spill (a store.Aside) sets aside what a pass of neighbour descent
// gives to rows far from the rows at hand, when the lists are in files
// (out of core): the local joins' offers, and backward's reverse
// candidates. It hands them back when the pass is done. A nil spill sets
// nothing aside.
//
// Rows are in the partition's order, so most of a join's offers go to
// rows near the joined row (at 3·10⁶ rows, half within 4,096 rows of it
// and 87% within 131,072): their lists are offered at once, held in
// anonymous memory while the chunks pass them (nearLists). The rest would
// each bring in a page of lists from anywhere, dirty it and leave it to be
// written back, chunk after chunk: at 3·10⁶ rows in a 1 GiB cgroup a
// round's joins read 6.4 GB and wrote 7.1 GB, of which offering took 5.2
// and 7.1. Set aside, they are written once in order, to a file a group of
// window rows, and handed back group by group, each group's rows visited
// once. Backward's reverse candidates, written into the candidates of the
// rows they go to, are alike.
//
// What a pass makes is the same: a row's list is the best m of all it
// was offered, by (distance, row), whatever their order, and an offer
// made against a looser bound, set aside while the bound tightened, is
// beyond the final m-th and is turned away when offered; a row's reverse
// candidates are the lowest keys of all it is given.
type spill[T store.Targeted] struct {
	*store.Aside[T]
}

// newSpill returns a spill of what (for errors) to n rows, in files of
// sp's directory, by groups of window rows.
func newSpill[T store.Targeted](sp *store.ScratchSpace, what string, window, n int) *spill[T] {
	return &spill[T]{store.NewAside[T](sp, what, window, n)}
}

// near reports whether row u takes what the rows [lo, hi) give it at
// once: it is within half a window of them.
func (s *spill[T]) near(u int32, lo, hi int) bool {
	return s == nil || int(u) >= lo-s.Window()/2 && int(u) < hi+s.Window()/2
}

// sift keeps in each slice of items those near rows [lo, hi), in their
// order, and sets the others aside.
func (s *spill[T]) sift(items [][]T, lo, hi int) error {
	if s == nil {
		return nil
	}
	for k, its := range items {
		kept := its[:0]
		for _, it := range its {
			if s.near(it.Target(), lo, hi) {
				kept = append(kept, it)
			} else if err := s.Put(it); err != nil {
				return err
			}
		}
		items[k] = kept
	}
	return nil
}

// take hands what was set aside to give, group by group, closes the files
// and returns the bytes set aside; nothing for a nil spill.
func (s *spill[T]) take(give func([]T) error) (int64, error) {
	if s == nil {
		return 0, nil
	}
	return s.Take(give)
}

// close closes the files and readies the spill for the next round.
func (s *spill[T]) close() error {
	if s == nil {
		return nil
	}
	return s.Close()
}

// spillScratch is the scratch memory descent's spills' windows are cut
// from when the search has none to go by; spillWindowMin the fewest rows
// of a window.
const (
	spillScratch   = 512 << 20
	spillWindowMin = 1 << 14
)

// spillWindows returns the windows of descent's spills in rows, 0 for
// none: the tests' spillWindow for both; else, if the lists (held by sc,
// m a row) are in a file, for the reverse candidates the rows whose lists
// take half the search's scratch memory (the budget's share the page
// cache is given as much of), or of spillScratch without one, and for the
// offers an eighth, less a chunk of joins and no more than the anonymous
// memory left (memory) holds; at least spillWindowMin each.
//
// The offers' window is held in anonymous memory while the joins run
// (nearLists), the reverse candidates' is left to the page cache. It is
// the smaller because the memory it takes is the page cache's, whose
// share the joins' reads of the features at random need: at 3·10⁶ rows in
// 400 MiB, a window of half the scratch memory (136,843 rows, 51 MB held)
// set aside 1.66 GB of offers where an eighth set aside 2.78, but the
// first round of descent read 20.9 GB against 15.5 and took 58.2 s
// against 50.6. The reverse candidates' window stays large: at 3·10⁶ rows
// a window of 32,768 rows made backward read 18.6 GB where it read 2.8.
func (opt KNNOptions) spillWindows(sc *store.Scratch, m int, memory int64) (offers, reverses int) {
	if opt.spillWindow > 0 {
		return opt.spillWindow, opt.spillWindow
	}
	if sc.Where() != "file" {
		return 0, 0
	}
	bytes := int64(spillScratch)
	if opt.ScratchMemory > 0 {
		bytes = opt.ScratchMemory
	}
	row := int64(12*m + 12)
	rows := func(b int64) int { return max(spillWindowMin, int(b/row)) }
	joins, _ := opt.descentBuffers()
	return rows(min(bytes/8, memory) - int64(joins)*row), rows(bytes / 2)
}
