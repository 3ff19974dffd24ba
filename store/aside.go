package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"
)

// Aside sets items aside by group of rows, in unlinked files of a
// ScratchSpace, and hands them back group by group, each group's in the
// order they were set aside. Out of core, what a pass gives to rows far
// from the rows at hand (their data in files larger than memory) would
// each bring in and dirty a page anywhere, for the kernel to write back
// and read again; set aside, it is written once, in order, and read back
// once. Package graph's neighbour descent and sweeps, and package
// spectral's coarse graphs, use it.
//
// T is a value for the row Target returns. It must hold no pointers: it is
// written and read back as its bytes.
type Aside[T Targeted] struct {
	sp     *ScratchSpace
	what   string // what is set aside, for errors
	window int    // rows of a group
	piece  int    // the most items handed back at a time
	files  []*os.File
	out    []*bufio.Writer
	count  []int64 // items set aside, by group
	bytes  int64   // written since the last Take or Close
}

// Targeted is an item of an Aside: a value for one row.
type Targeted interface {
	Target() int32
}

// asideBuffer is the bytes of a group's write buffer; asidePiece the most
// bytes handed back at a time (32 MiB).
const (
	asideBuffer = 1 << 18
	asidePiece  = 1 << 25
)

// NewAside returns an Aside of what (for errors) to n rows, in files of
// sp's directory, by groups of window rows, handed back in pieces of 32
// MiB.
func NewAside[T Targeted](sp *ScratchSpace, what string, window, n int) *Aside[T] {
	g := (n + window - 1) / window
	var it T
	return &Aside[T]{sp: sp, what: what, window: window, piece: max(1, asidePiece/int(unsafe.Sizeof(it))),
		files: make([]*os.File, g), out: make([]*bufio.Writer, g), count: make([]int64, g)}
}

// Window returns the rows of a group: group g is rows [g·window,
// (g+1)·window).
func (s *Aside[T]) Window() int { return s.window }

// Groups returns the number of groups.
func (s *Aside[T]) Groups() int { return len(s.files) }

// SetPiece sets the most items handed back at a time (tests set few).
func (s *Aside[T]) SetPiece(items int) { s.piece = max(1, items) }

// Put sets item it aside, in its row's group's file.
func (s *Aside[T]) Put(it T) error {
	g := int(it.Target()) / s.window
	if s.out[g] == nil {
		f, err := s.sp.File()
		if err != nil {
			return fmt.Errorf("setting %s aside: %w", s.what, err)
		}
		s.files[g], s.out[g] = f, bufio.NewWriterSize(f, asideBuffer)
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&it)), unsafe.Sizeof(it))
	if _, err := s.out[g].Write(b); err != nil {
		return fmt.Errorf("setting %s aside in %s: %w", s.what, s.files[g].Name(), err)
	}
	s.count[g]++
	s.bytes += int64(len(b))
	return nil
}

// Take hands everything set aside to give, group by group, closes the
// files and returns the bytes set aside since the last Take.
func (s *Aside[T]) Take(give func([]T) error) (int64, error) {
	defer s.Close()
	var piece []T
	for g := range s.files {
		if err := s.TakeGroup(g, &piece, give); err != nil {
			return 0, err
		}
	}
	return s.bytes, nil
}

// TakeGroup hands what was set aside for the rows of group g to give, in
// the order it was set aside, in pieces read into *piece, and closes the
// group's file: what is set aside for them next starts a new one.
func (s *Aside[T]) TakeGroup(g int, piece *[]T, give func([]T) error) error {
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

// Close closes the files (unlinked: their space goes with them),
// dropping what they hold, and readies the Aside for the next pass.
func (s *Aside[T]) Close() error {
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
