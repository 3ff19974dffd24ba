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
// to hold: a file in a directory, unlinked as soon as it is mapped, so that
// its pages are file-backed (the kernel writes them out under memory
// pressure instead of failing) and nothing is left behind by a crash. With
// no directory it is heap memory.
type scratch struct {
	f   *os.File
	mem []byte
}

// newScratch returns size bytes of zeroed scratch memory, in a file in dir
// or, if dir is empty, on the heap. The memory is aligned for 8-byte words.
func newScratch(dir string, size int) (*scratch, error) {
	if dir == "" || size == 0 {
		return &scratch{mem: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(make([]uint64, (size+7)/8)))), size)}, nil
	}
	f, err := os.CreateTemp(dir, ".knn-scratch-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	if err := f.Truncate(int64(size)); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
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
	if s.f == nil {
		s.mem = nil
		return nil
	}
	err := store.UnmapReadOnly(s.mem)
	s.mem = nil
	return errors.Join(err, s.f.Close())
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
// of those rows (see approxSearch), in scratch memory in dir.
func bestIn(dir string, rows, m int) (*best, []uint64, *scratch, error) {
	size := rows*m*8 + (rows*m*4+7)&^7 + (rows*4+7)&^7 + rows*8
	s, err := newScratch(dir, size)
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
