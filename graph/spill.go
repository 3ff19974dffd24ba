package graph

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"

	"github.com/ssnmf/ssnmf/store"
)

// A spill sets aside what a pass gives to rows far from the rows at hand,
// when their data are in files (out of core), to hand it back group of rows
// by group of rows: neighbour descent's local joins' offers and backward's
// reverse candidates, handed back when the pass is done, and a sweep's
// changes of P·W (sweepSpill), handed back when the sweep reaches their
// rows.
//
// Rows are in the partition's order, so most of a join's offers go to
// rows near the joined row (at 3·10⁶ rows, half within 4,096 rows of it
// and 87% within 131,072): their lists are offered at once, from pages the
// joins of the last chunks brought into the page cache. The rest would
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
type spill[T spillItem] struct {
	sp     *store.ScratchSpace
	what   string // what is set aside, for errors
	window int    // rows of a group, and the reach of items taken at once
	piece  int    // the most items taken back into the heap at a time
	files  []*os.File
	out    []*bufio.Writer
	count  []int64 // items set aside, by group
	bytes  int64   // written since the last take
}

// spillItem is what a spill sets aside: a value for one row.
type spillItem interface {
	joinOffer | reverseEntry | spreadEntry
	target() int32
}

// spillBuffer is the bytes of a group's write buffer; spillPiece the most
// bytes taken back into the heap at a time (32 MiB).
const (
	spillBuffer = 1 << 18
	spillPiece  = 1 << 25
)

// near reports whether row u takes what the rows [lo, hi) give it at
// once: it is within half a window of them.
func (s *spill[T]) near(u int32, lo, hi int) bool {
	return s == nil || int(u) >= lo-s.window/2 && int(u) < hi+s.window/2
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
			if s.near(it.target(), lo, hi) {
				kept = append(kept, it)
			} else if err := s.put(it); err != nil {
				return err
			}
		}
		items[k] = kept
	}
	return nil
}

// put sets item it aside, in its row's group's file.
func (s *spill[T]) put(it T) error {
	g := int(it.target()) / s.window
	if s.out[g] == nil {
		f, err := s.sp.File()
		if err != nil {
			return fmt.Errorf("setting %s aside: %w", s.what, err)
		}
		s.files[g], s.out[g] = f, bufio.NewWriterSize(f, spillBuffer)
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&it)), unsafe.Sizeof(it))
	if _, err := s.out[g].Write(b); err != nil {
		return fmt.Errorf("setting %s aside in %s: %w", s.what, s.files[g].Name(), err)
	}
	s.count[g]++
	s.bytes += int64(len(b))
	return nil
}

// take hands what was set aside to give, group by group, in pieces of at
// most s.piece items, closes the files and returns the bytes set aside.
func (s *spill[T]) take(give func([]T) error) (int64, error) {
	if s == nil {
		return 0, nil
	}
	defer s.close()
	var piece []T
	for g := range s.files {
		if err := s.takeGroup(g, &piece, give); err != nil {
			return 0, err
		}
	}
	return s.bytes, nil
}

// takeGroup hands what was set aside for the rows of group g to give, in
// the order it was set aside, in pieces of at most s.piece items read
// into *piece, and closes the group's file: what is set aside for them
// next starts a new one.
func (s *spill[T]) takeGroup(g int, piece *[]T, give func([]T) error) error {
	f := s.files[g]
	if f == nil {
		return nil
	}
	defer func() {
		f.Close()
		s.files[g], s.out[g], s.count[g] = nil, nil, 0
	}()
	if err := s.out[g].Flush(); err != nil {
		return fmt.Errorf("setting %s aside in %s: %w", s.what, f.Name(), err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s set aside in %s: %w", s.what, f.Name(), err)
	}
	for left := s.count[g]; left > 0; {
		n := int(min(int64(s.piece), left))
		if cap(*piece) < n {
			*piece = make([]T, n)
		}
		p := (*piece)[:n]
		b := unsafe.Slice((*byte)(unsafe.Pointer(&p[0])), n*int(unsafe.Sizeof(p[0])))
		if _, err := io.ReadFull(f, b); err != nil {
			return fmt.Errorf("%s set aside in %s: %w", s.what, f.Name(), err)
		}
		if err := give(p); err != nil {
			return err
		}
		left -= int64(n)
	}
	return nil
}

// close closes the files (unlinked: their space goes with them) and
// readies the spill for the next round.
func (s *spill[T]) close() error {
	if s == nil {
		return nil
	}
	var errs []error
	for g, f := range s.files {
		if f != nil {
			errs = append(errs, f.Close())
		}
		s.files[g], s.out[g], s.count[g] = nil, nil, 0
	}
	s.bytes = 0
	return errors.Join(errs...)
}

// newSpill returns a spill of what (for errors) to n rows, in files of
// sp's directory, by groups of window rows, taken back in pieces of
// spillPiece bytes.
func newSpill[T spillItem](sp *store.ScratchSpace, what string, window, n int) *spill[T] {
	g := (n + window - 1) / window
	var it T
	return &spill[T]{sp: sp, what: what, window: window, piece: spillPiece / int(unsafe.Sizeof(it)),
		files: make([]*os.File, g), out: make([]*bufio.Writer, g), count: make([]int64, g)}
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
// offers an eighth; at least spillWindowMin each.
//
// The offers' window is the smaller because the lists within it are
// offered to, and their pages dirtied, by every chunk of joins it reaches
// over, and the kernel writes dirty pages back as they pass its limits,
// not once the window has gone by: at 3·10⁷ rows in 4 GiB, a window of
// 1,443,201 rows (half the scratch memory) took 88 chunks' offers, and a
// round's offers near the joins wrote 82.6 GB for 10.8 GB of lists; with
// 262,144 rows they wrote 29.7 GB, the offers set aside grew from 8.45 to
// 15.7 GB, and the round wrote 100 GB where it wrote 158, in 407 s where
// it took 525 (at 3·10⁶ in 400 MiB, with 32,768 rows against 140,937:
// 9.5 GB where 12.5). The reverse candidates' window stays large: at
// 3·10⁶ rows a window of 32,768 rows made backward read 18.6 GB where it
// read 2.8.
func (opt KNNOptions) spillWindows(sc *store.Scratch, m int) (offers, reverses int) {
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
	rows := func(b int64) int { return max(spillWindowMin, int(b/int64(12*m+12))) }
	return rows(bytes / 8), rows(bytes / 2)
}
