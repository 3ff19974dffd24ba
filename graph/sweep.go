package graph

import (
	"context"
	"errors"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store"
)

// Sweep returns the row access of a row-wise method: one block of all n
// rows, whose Spread reaches every neighbour of a row, so that nothing is
// ever pending. With opt.Window (a P·W in a file larger than memory), the
// blocks are windows of that many rows, and Spread sets the changes of
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
	sp := store.NewScratchSpace(opt.Dir, 0)
	return &sweepSpill{sweep: s, k: k, aside: store.NewAside[spreadEntry](sp, "a sweep's changes of P·W", opt.Window, n)}, nil
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
// rows read and write their rows of W and P·W, and the graph's, in order,
// and the changes they make to the rows of other windows, which would each
// dirty a page of P·W anywhere in its file, are set aside, in a file a
// window, and added when the sweep pulls their window, or at its end.
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
	aside  *store.Aside[spreadEntry]
	lo, hi int // the window pulled last
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

// Pull adds what was set aside for the rows r0:r1 and makes them the
// window whose rows Spread changes at once.
func (s *sweepSpill) Pull(_ context.Context, r0, r1 int, pw []float64, _ *fw.Pending) (fw.Block, error) {
	if s.err != nil {
		return nil, s.err
	}
	s.lo, s.hi = r0, r1
	return s, s.aside.TakeGroup(r0/s.aside.Window(), &s.piece, s.add(pw))
}

// Push adds, after the last window, everything set aside.
func (s *sweepSpill) Push(_ context.Context, _, r1 int, pw []float64, _ *fw.Pending) error {
	if r1 < s.m.N() {
		return s.err
	}
	return s.Settle(pw)
}

// Settle adds everything set aside to pw.
func (s *sweepSpill) Settle(pw []float64) error {
	if s.err != nil {
		return s.err
	}
	s.piece = nil
	_, err := s.aside.Take(s.add(pw))
	return err
}

// add returns the function that adds a piece of changes set aside to pw.
func (s *sweepSpill) add(pw []float64) func([]spreadEntry) error {
	return func(piece []spreadEntry) error {
		k := s.k
		for _, e := range piece {
			pw[int(e.row)*k+int(e.col)] += e.v
		}
		return nil
	}
}

// Spread adds P_li·d to row l of pw for every neighbour l of i in the
// window, and sets it aside for the others.
func (s *sweepSpill) Spread(pw []float64, k, i int, cols []int32, vals []float64) {
	m := s.m
	for e := m.RowPtr[i]; e < m.RowPtr[i+1]; e++ {
		v, l := float64(s.scale*m.Val[e]), int(m.Col[e])
		if l >= s.lo && l < s.hi {
			pl := pw[l*k : (l+1)*k]
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
