package store

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"
)

// Scratch is working memory of a computation that may exceed the heap
// one wants to hold (the kNN search's lists, the spectral embedding's
// blocks). While its space's budget lasts it is anonymous memory outside
// the Go heap; past it, a file in the space's directory, unlinked as soon
// as it is mapped, so that its pages are file-backed (the kernel writes
// them out under memory pressure instead of failing) and nothing is left
// behind by a crash; with no directory, heap memory. Anonymous memory
// comes first because a computation may rewrite its scratch over and
// over: a file's dirty pages are written back to disk as they age, and
// past the kernel's dirty limits the writer is stalled until they are (a
// kNN search at 10⁷ rows in files wrote 300 GB). Where the memory is
// changes no value computed in it.
type Scratch struct {
	// Mem is the memory, zeroed when made, aligned for 8-byte words.
	Mem   []byte
	f     *os.File
	anon  bool
	space *ScratchSpace
}

// ScratchSpace is where scratch memory goes: up to a budget of anonymous
// memory at a time, then files in a directory (the heap if there is
// none). It is safe for use by concurrent goroutines.
type ScratchSpace struct {
	dir   string
	left  atomic.Int64
	files atomic.Int64 // bytes made in files, in all
}

// NewScratchSpace returns a space of files in dir ("" for the heap) with
// a budget of memory bytes of anonymous memory.
func NewScratchSpace(dir string, memory int64) *ScratchSpace {
	sp := &ScratchSpace{dir: dir}
	sp.left.Store(memory)
	return sp
}

// Left returns the bytes of anonymous memory the space may still grant:
// none for a nil sp.
func (sp *ScratchSpace) Left() int64 {
	if sp == nil {
		return 0
	}
	return sp.left.Load()
}

// FileBytes returns the bytes of scratch the space has made in files, in
// all, released or not: 0 while everything fitted in memory.
func (sp *ScratchSpace) FileBytes() int64 { return sp.files.Load() }

// New returns size bytes of zeroed scratch memory from sp; a nil sp
// gives heap memory.
func (sp *ScratchSpace) New(size int) (*Scratch, error) {
	if sp != nil && size > 0 {
		if sp.left.Add(-int64(size)) >= 0 {
			mem, err := MapAnonymous(size)
			if err == nil {
				return &Scratch{Mem: mem, anon: true, space: sp}, nil
			}
		}
		sp.left.Add(int64(size))
	}
	if sp == nil || sp.dir == "" || size == 0 {
		return &Scratch{Mem: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(make([]uint64, (size+7)/8)))), size)}, nil
	}
	f, err := sp.File()
	if err != nil {
		return nil, err
	}
	if err := Reserve(f, int64(size)); err != nil {
		f.Close()
		return nil, err
	}
	mem, err := MapReadWrite(f, size)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	sp.files.Add(int64(size))
	return &Scratch{Mem: mem, f: f}, nil
}

// File returns a new empty file in the space's directory, unlinked, for
// scratch written and read in order rather than mapped (items set aside
// to be taken up later); closing it frees its space. It fails if the
// space has no directory.
func (sp *ScratchSpace) File() (*os.File, error) {
	if sp == nil || sp.dir == "" {
		return nil, errors.New("scratch file: no scratch directory")
	}
	f, err := os.CreateTemp(sp.dir, ".scratch-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Where says where the scratch is: "memory" (anonymous memory), "file"
// or "heap".
func (s *Scratch) Where() string {
	switch {
	case s.anon:
		return "memory"
	case s.f != nil:
		return "file"
	}
	return "heap"
}

// Release frees the memory; the scratch and every slice carved from it
// must not be used after. Releasing a nil or released Scratch does
// nothing.
func (s *Scratch) Release() error {
	if s == nil || s.Mem == nil {
		return nil
	}
	mem := s.Mem
	s.Mem = nil
	switch {
	case s.anon:
		s.space.left.Add(int64(len(mem)))
		return UnmapAnonymous(mem)
	case s.f == nil:
		return nil
	}
	return errors.Join(UnmapReadOnly(mem), s.f.Close())
}

// Carve returns n values of type T at byte offset *off of the scratch and
// moves *off past them, to the next 8-byte boundary. T must hold no
// pointers and need at most 8-byte alignment.
func Carve[T any](s *Scratch, off *int, n int) []T {
	if n == 0 {
		return []T{}
	}
	v := unsafe.Slice((*T)(unsafe.Pointer(&s.Mem[*off])), n)
	*off += (n*int(unsafe.Sizeof(v[0])) + 7) &^ 7
	return v
}

// Float64s returns n zeroed float64 values of scratch memory from sp, and
// the scratch to release when they are no longer used.
func (sp *ScratchSpace) Float64s(n int) ([]float64, *Scratch, error) {
	s, err := sp.New(8 * n)
	if err != nil {
		return nil, nil, err
	}
	off := 0
	return Carve[float64](s, &off, n), s, nil
}
