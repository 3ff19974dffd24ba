package store

import (
	"os"
	"testing"
)

// TestScratchSpace checks where scratch memory goes: anonymous memory
// while the budget holds a piece whole, then a file in the directory (the
// heap without one, or without a space), and that a released piece gives
// its budget back.
func TestScratchSpace(t *testing.T) {
	sp := NewScratchSpace(t.TempDir(), 100)
	get := func(size int, want string) *Scratch {
		t.Helper()
		s, err := sp.New(size)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Where(); got != want || len(s.Mem) != size {
			t.Fatalf("%d bytes with %d left: %s of %d bytes, want %s", size, sp.Left(), got, len(s.Mem), want)
		}
		for i := range s.Mem {
			if s.Mem[i] != 0 {
				t.Fatalf("byte %d of new scratch is %d", i, s.Mem[i])
			}
			s.Mem[i] = 1
		}
		return s
	}
	a := get(60, "memory")
	b := get(60, "file")
	c := get(40, "memory")
	if sp.Left() != 0 {
		t.Fatalf("budget left %d, want 0", sp.Left())
	}
	for _, s := range []*Scratch{a, b} {
		if err := s.Release(); err != nil {
			t.Fatal(err)
		}
	}
	d := get(60, "memory")
	for _, s := range []*Scratch{c, d} {
		if err := s.Release(); err != nil {
			t.Fatal(err)
		}
	}
	if sp.Left() != 100 || sp.FileBytes() != 60 {
		t.Fatalf("budget left %d after every release, want 100; %d bytes made in files, want 60", sp.Left(), sp.FileBytes())
	}
	sp = NewScratchSpace("", 10)
	get(20, "heap").Release()
	var none *ScratchSpace
	if s, err := none.New(8); err != nil || s.Where() != "heap" {
		t.Errorf("a nil space: %v, %v; want heap memory", s, err)
	}
	if err := (*Scratch)(nil).Release(); err != nil {
		t.Errorf("releasing a nil scratch: %v", err)
	}
	f, s, err := NewScratchSpace(t.TempDir(), 0).Float64s(3)
	if err != nil || len(f) != 3 || s.Where() != "file" {
		t.Fatalf("Float64s(3) in a space of no memory: %d values, %v; want 3 in a file", len(f), err)
	}
	f[2] = 1.5
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
}

// TestScratchFile checks ScratchSpace.File: an empty file, unlinked from
// the space's directory, that reads back what was written; and an error
// for a space with no directory.
func TestScratchFile(t *testing.T) {
	dir := t.TempDir()
	f, err := NewScratchSpace(dir, 0).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if names, err := os.ReadDir(dir); err != nil || len(names) != 0 {
		t.Errorf("the directory holds %v (%v), want nothing: the file unlinked", names, err)
	}
	if _, err := f.WriteString("set aside"); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 9)
	if _, err := f.ReadAt(b, 0); err != nil || string(b) != "set aside" {
		t.Errorf("read back %q, %v", b, err)
	}
	for _, sp := range []*ScratchSpace{NewScratchSpace("", 1<<20), nil} {
		if f, err := sp.File(); err == nil {
			f.Close()
			t.Errorf("File of a space with no directory: no error")
		}
	}
}
