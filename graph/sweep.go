package graph

import (
	"context"
	"errors"
	"fmt"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store"
)

// Sweep returns the row access of a row-wise method: one block of all n
// rows, whose Spread reaches every neighbour of a row, so that nothing is
// ever pending. With opt.Window (a P·W in a file larger than memory), the
// blocks are windows of that many rows, whose rows of P·W the sweep holds
// in anonymous memory while it visits them, and Spread sets the changes of
// the rows of other windows aside (sweepSpill). The other options do not
// apply: there is no strip.
func (m *CSR) Sweep(k int, opt fw.SweepOptions) (fw.Sweep, error) {
	if err := m.checkScale(); err != nil {
		return nil, err
	}
	n := m.N()
	s := &sweep{m: m, scale: m.Scale, bounds: []int{0, n}}
	if opt.Window <= 0 || opt.Window >= n {
		return s, nil
	}
	if opt.Dir == "" {
		return nil, errors.New("a sweep in windows of rows: no directory to set changes aside in")
	}
	s.bounds = s.bounds[:0]
	for r := 0; r < n; r += opt.Window {
		s.bounds = append(s.bounds, r)
	}
	s.bounds = append(s.bounds, n)
	sp := store.NewScratchSpace(opt.Dir, int64(8*k*opt.Window))
	return &sweepSpill{sweep: s, k: k, space: sp, aside: store.NewAside[spreadEntry](sp, "a sweep's changes of P·W", opt.Window, n)}, nil
}

// sweep is the Sweep of a CSR, and its own Block.
type sweep struct {
	m      *CSR
	scale  float64 // m.Scale when the sweep began
	bounds []int
}

func (s *sweep) Blocks() []int { return s.bounds }

// Passes returns 1: a sweep reads every stored entry once.
func (s *sweep) Passes() int { return 1 }

// Defers returns false: Spread passes every change on, or sets it aside.
func (s *sweep) Defers() bool { return false }

// Pull adds nothing: every change reached P·W at its row's visit.
func (s *sweep) Pull(context.Context, int, int, []float64, *fw.Pending) (fw.Block, error) {
	return s, nil
}

// Push adds nothing, for the same reason.
func (s *sweep) Push(context.Context, int, int, []float64, *fw.Pending) error { return nil }

func (s *sweep) Diag(i int) float64 { return s.scale * s.m.diag[i] }

// Spread adds P_li·d to row l of pw for every neighbour l of i (P_li =
// P_il), i included if P_ii is stored.
func (s *sweep) Spread(pw []float64, k, i int, cols []int32, vals []float64) {
	m := s.m
	for e := m.RowPtr[i]; e < m.RowPtr[i+1]; e++ {
		v, l := float64(s.scale*m.Val[e]), int(m.Col[e])
		pl := pw[l*k : (l+1)*k]
		for q, c := range cols {
			pl[c] += float64(v * vals[q])
		}
	}
}

// sweepSpill is the Sweep of a CSR whose P·W is kept current one window
// of rows at a time, and its Block: out of core, the visits of a window's
// rows read and write their rows of W, and the graph's, in order, and
// their rows of P·W in a copy in anonymous memory (fw's holder), taken
// from the file at the window's Pull and put back at its Push; the changes
// they make to the rows of other windows, which would each dirty a page of
// P·W anywhere in its file, are set aside, in a file a window, and added
// when the sweep pulls their window, or at its end.
//
// The copy is what keeps the pages of P·W from being written again and
// again: a mapped file's dirty pages are written back whenever the memory
// cgroup's reclaim wakes the kernel's flusher, which writes every dirty
// page, the window's included, and each next change of a page written
// back dirties it again (at 3·10⁶ rows in 400 MiB, a window of 105 MB of
// P·W was written about 30 times a sweep, and locking it in memory changed
// nothing). The copy is made at the first Pull of a sweep and freed when
// it settles.
//
// The bits are those of one block: every change to a row of P·W is added
// in the order of the visits that made it. A row of window b is given,
// in order, the changes of the windows before b (set aside, added when b
// is pulled), those of b itself (at once) and those of the windows after
// b (set aside, added when the last window is pushed); a sweep that stops
// part way adds all it set aside (Settle), and the changes it makes after
// it goes on all come later.
type sweepSpill struct {
	*sweep
	k      int
	space  *store.ScratchSpace // the copy's anonymous memory, and the aside's files
	aside  *store.Aside[spreadEntry]
	lo, hi int       // the window pulled last
	rows   []float64 // its rows of P·W, while held; a window's room
	mem    *store.Scratch
	piece  []spreadEntry
	err    error // the first error of setting a change aside
}

// spreadEntry is a change of one value of P·W set aside: row, column and
// the product P_li·d_c to add.
type spreadEntry struct {
	row, col int32
	v        float64
}

// Target returns the row of P·W changed (store.Targeted).
func (e spreadEntry) Target() int32 { return e.row }

// Pull copies the rows r0:r1 of pw, adds what was set aside for them and
// makes them the window whose rows Spread changes at once.
func (s *sweepSpill) Pull(_ context.Context, r0, r1 int, pw []float64, _ *fw.Pending) (fw.Block, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.mem == nil {
		rows, mem, err := s.space.Float64s(s.aside.Window() * s.k)
		if err != nil {
			return nil, fmt.Errorf("a window of P·W: %w", err)
		}
		s.rows, s.mem = rows, mem
	}
	s.lo, s.hi = r0, r1
	copy(s.rows, pw[r0*s.k:r1*s.k])
	return s, s.aside.TakeGroup(r0/s.aside.Window(), &s.piece, s.add(s.rows, r0))
}

// Rows returns the window's rows of P·W (fw's holder).
func (s *sweepSpill) Rows() ([]float64, int) { return s.rows[:(s.hi-s.lo)*s.k], s.lo }

// Push puts the window's rows back in pw, and adds, after the last window,
// everything set aside.
func (s *sweepSpill) Push(_ context.Context, _, r1 int, pw []float64, _ *fw.Pending) error {
	if r1 < s.m.N() {
		s.putBack(pw)
		return s.err
	}
	return s.Settle(pw)
}

// Settle puts the window's rows back in pw, frees their copy and adds
// everything set aside to pw.
func (s *sweepSpill) Settle(pw []float64) error {
	s.putBack(pw)
	err := s.mem.Release()
	s.rows, s.mem, s.piece = nil, nil, nil
	if err = errors.Join(s.err, err); err != nil {
		return err
	}
	_, err = s.aside.Take(s.add(pw, 0))
	return err
}

// putBack copies the window's rows to pw, once: the window is then empty.
func (s *sweepSpill) putBack(pw []float64) {
	copy(pw[s.lo*s.k:s.hi*s.k], s.rows)
	s.lo, s.hi = 0, 0
}

// add returns the function that adds a piece of changes set aside to pw,
// whose first row is row r0.
func (s *sweepSpill) add(pw []float64, r0 int) func([]spreadEntry) error {
	return func(piece []spreadEntry) error {
		k := s.k
		for _, e := range piece {
			pw[(int(e.row)-r0)*k+int(e.col)] += e.v
		}
		return nil
	}
}

// Spread adds P_li·d to row l of the window's rows of P·W for every
// neighbour l of i in the window, and sets it aside for the others; pw is
// not used.
func (s *sweepSpill) Spread(_ []float64, k, i int, cols []int32, vals []float64) {
	m := s.m
	for e := m.RowPtr[i]; e < m.RowPtr[i+1]; e++ {
		v, l := float64(s.scale*m.Val[e]), int(m.Col[e])
		if l >= s.lo && l < s.hi {
			pl := s.rows[(l-s.lo)*k : (l-s.lo+1)*k]
			for q, c := range cols {
				pl[c] += float64(v * vals[q])
			}
			continue
		}
		for q, c := range cols {
			if err := s.aside.Put(spreadEntry{row: int32(l), col: c, v: float64(v * vals[q])}); err != nil && s.err == nil {
				s.err = err // Spread returns nothing: the next Pull, Push or Settle does
			}
		}
	}
}
