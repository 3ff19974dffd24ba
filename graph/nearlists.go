package graph

import (
	"fmt"

	"github.com/ssnmf/ssnmf/store"
)

// nearLists holds, out of core, the lists of the rows near the chunk of
// joins at hand (those a spill does not set aside) in anonymous memory,
// where the chunk's offers change them; a row is read from the lists'
// file when an offer first reaches its list, and written back, if its list
// changed, when the chunks have moved past it.
//
// Offered in the file, as they were, the lists near the joins took every
// chunk's offers in their mapped pages, and the memory cgroup's reclaim,
// which wakes the kernel's flusher to write every dirty page, had those
// pages written back and dirtied again, chunk after chunk: at 3·10⁷ rows
// in 4 GiB a round of descent's offers near the joins wrote 29.7 GB for
// 10.8 GB of lists. Held here, a row's list is written back once a round
// at most, and only if it changed.
//
// The lists are the same: a row's list is the best m of all it is
// offered, wherever it is held while offered.
type nearLists struct {
	file   *best // the lists
	held   *best // slot r mod len(loaded) holds row r, if loaded
	loaded []bool
	lo, hi int // the rows held are within [lo, hi)
	mem    *store.Scratch
}

// newNearLists returns room in sp's memory for the lists of rows rows of
// file.
func newNearLists(sp *store.ScratchSpace, file *best, rows int) (*nearLists, error) {
	m := file.m
	mem, err := sp.New(rows*m*8 + (rows*m*4+7)&^7 + (rows*4+7)&^7)
	if err != nil {
		return nil, fmt.Errorf("kNN descent's lists near the joins: %w", err)
	}
	off := 0
	held := &best{m: m, id: file.id}
	held.d = store.Carve[float64](mem, &off, rows*m)
	held.j = store.Carve[int32](mem, &off, rows*m)
	held.cnt = store.Carve[int32](mem, &off, rows)
	return &nearLists{file: file, held: held, loaded: make([]bool, rows), mem: mem}, nil
}

// slot returns the slot of row r, reading its list from the file first if
// it is not held. Rows of different slots may be taken concurrently.
func (h *nearLists) slot(r int) int {
	s := r % len(h.loaded)
	if !h.loaded[s] {
		h.held.copyRow(s, h.file, r)
		h.loaded[s] = true
	}
	return s
}

// cover makes the rows [lo, hi) those held, moving on from the last: the
// rows before lo are let go, each written back to the file if changed
// says it changed. Neither bound may move back, and hi-lo must not exceed
// the slots.
func (h *nearLists) cover(lo, hi int, changed []bool) {
	for ; h.lo < min(lo, h.hi); h.lo++ {
		h.letGo(h.lo, changed)
	}
	h.lo = max(h.lo, lo)
	h.hi = max(h.hi, hi, h.lo)
}

// flush lets go every row held, as cover does.
func (h *nearLists) flush(changed []bool) {
	for ; h.lo < h.hi; h.lo++ {
		h.letGo(h.lo, changed)
	}
}

// letGo frees row r's slot, writing its list back first if it changed.
func (h *nearLists) letGo(r int, changed []bool) {
	s := r % len(h.loaded)
	if h.loaded[s] && changed[r] {
		h.file.copyRow(r, h.held, s)
	}
	h.loaded[s] = false
}

// release frees the memory.
func (h *nearLists) release() error {
	if h == nil {
		return nil
	}
	return h.mem.Release()
}
