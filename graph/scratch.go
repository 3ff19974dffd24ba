package graph

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"unsafe"

	"github.com/ssnmf/ssnmf/store"
)

// scratch is working memory of a build that may exceed the heap one wants
// to hold. While a space's budget lasts it is anonymous memory outside the
// Go heap; past it, a file in the space's directory, unlinked as soon as
// it is mapped, so that its pages are file-backed (the kernel writes them
// out under memory pressure instead of failing) and nothing is left behind
// by a crash; with no directory, heap memory. Anonymous memory comes first
// because the search rewrites its scratch round after round: a file's
// dirty pages are written back to disk as they age, and past the kernel's
// dirty limits the writer is stalled until they are (a search at 10⁷ rows
// in files wrote 300 GB).
type scratch struct {
	f     *os.File
	mem   []byte
	anon  bool
	space *scratchSpace
}

// scratchSpace is where a build's scratch memory goes: up to left bytes of
// anonymous memory at a time, then files in dir (the heap if dir is
// empty). It is shared by the build's goroutines.
type scratchSpace struct {
	dir  string
	left atomic.Int64
}

// newScratchSpace returns a space of files in dir with a budget of memory
// bytes of anonymous memory.
func newScratchSpace(dir string, memory int64) *scratchSpace {
	sp := &scratchSpace{dir: dir}
	sp.left.Store(memory)
	return sp
}

// newScratch returns size bytes of zeroed scratch memory from sp (nil: the
// heap). The memory is aligned for 8-byte words.
func newScratch(sp *scratchSpace, size int) (*scratch, error) {
	if sp != nil && size > 0 {
		if sp.left.Add(-int64(size)) >= 0 {
			mem, err := store.MapAnonymous(size)
			if err == nil {
				return &scratch{mem: mem, anon: true, space: sp}, nil
			}
		}
		sp.left.Add(int64(size))
	}
	if sp == nil || sp.dir == "" || size == 0 {
		return &scratch{mem: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(make([]uint64, (size+7)/8)))), size)}, nil
	}
	f, err := os.CreateTemp(sp.dir, ".knn-scratch-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	if err := store.Reserve(f, int64(size)); err != nil {
		f.Close()
		return nil, err
	}
	mem, err := store.MapReadWrite(f, size)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return &scratch{f: f, mem: mem}, nil
}

// release frees the memory; the scratch must not be used after.
func (s *scratch) release() error {
	mem := s.mem
	s.mem = nil
	switch {
	case s.anon:
		s.space.left.Add(int64(len(mem)))
		return store.UnmapAnonymous(mem)
	case s.f == nil:
		return nil
	}
	return errors.Join(store.UnmapReadOnly(mem), s.f.Close())
}

// carve returns n values of type T at byte offset *off of the scratch and
// moves *off past them, to the next 8-byte boundary.
func carve[T uint8 | int32 | float64 | uint64 | revEntry](s *scratch, off *int, n int) []T {
	if n == 0 {
		return []T{}
	}
	v := unsafe.Slice((*T)(unsafe.Pointer(&s.mem[*off])), n)
	*off += (n*int(unsafe.Sizeof(v[0])) + 7) &^ 7
	return v
}

// bestIn returns empty lists of m candidates for rows rows, and the bounds
// of those rows (see approxSearch), in scratch memory from sp.
func bestIn(sp *scratchSpace, rows, m int) (*best, []uint64, *scratch, error) {
	size := rows*m*8 + (rows*m*4+7)&^7 + (rows*4+7)&^7 + rows*8
	s, err := newScratch(sp, size)
	if err != nil {
		return nil, nil, nil, err
	}
	off := 0
	b := &best{m: m}
	b.d = carve[float64](s, &off, rows*m)
	b.j = carve[int32](s, &off, rows*m)
	b.cnt = carve[int32](s, &off, rows)
	return b, carve[uint64](s, &off, rows), s, nil
}

// loadBound and storeBound read and write a row's bound atomically.
func loadBound(w []uint64, i int) float64 {
	return math.Float64frombits(atomic.LoadUint64(&w[i]))
}

func storeBound(w []uint64, i int, v float64) {
	atomic.StoreUint64(&w[i], math.Float64bits(v))
}
