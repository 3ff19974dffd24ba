package graph

import "testing"

// TestScratchSpace checks where scratch memory goes: anonymous memory
// while the budget holds a piece whole, then a file in the directory (the
// heap without one), and that a released piece gives its budget back.
func TestScratchSpace(t *testing.T) {
	sp := newScratchSpace(t.TempDir(), 100)
	where := func(s *scratch) string {
		switch {
		case s.anon:
			return "anonymous"
		case s.f != nil:
			return "file"
		}
		return "heap"
	}
	get := func(size int, want string) *scratch {
		t.Helper()
		s, err := newScratch(sp, size)
		if err != nil {
			t.Fatal(err)
		}
		if got := where(s); got != want || len(s.mem) != size {
			t.Fatalf("%d bytes with %d left: %s of %d bytes, want %s", size, sp.left.Load(), got, len(s.mem), want)
		}
		for i := range s.mem {
			if s.mem[i] != 0 {
				t.Fatalf("byte %d of new scratch is %d", i, s.mem[i])
			}
			s.mem[i] = 1
		}
		return s
	}
	a := get(60, "anonymous")
	b := get(60, "file")
	c := get(40, "anonymous")
	if sp.left.Load() != 0 {
		t.Fatalf("budget left %d, want 0", sp.left.Load())
	}
	for _, s := range []*scratch{a, b} {
		if err := s.release(); err != nil {
			t.Fatal(err)
		}
	}
	d := get(60, "anonymous")
	for _, s := range []*scratch{c, d} {
		if err := s.release(); err != nil {
			t.Fatal(err)
		}
	}
	if sp.left.Load() != 100 {
		t.Fatalf("budget left %d after every release, want 100", sp.left.Load())
	}
	sp = newScratchSpace("", 10)
	get(20, "heap").release()
}
