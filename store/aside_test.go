package store

import (
	"slices"
	"strings"
	"testing"
)

// item is a test's Aside item: a row and a value.
type item struct{ row, v int32 }

func (it item) Target() int32 { return it.row }

// TestAside sets items aside for 100 rows in groups of 30, hands one
// group back, sets more aside for it, and then hands everything back: each
// group's items in the order they were set aside, in pieces of 7, and the
// bytes written.
func TestAside(t *testing.T) {
	a := NewAside[item](NewScratchSpace(t.TempDir(), 0), "test items", 30, 100)
	a.SetPiece(7)
	if a.Window() != 30 || a.Groups() != 4 {
		t.Fatalf("window %d, %d groups, want 30 and 4", a.Window(), a.Groups())
	}
	want := make([][]item, 4)
	put := func(from, to int32) {
		for v := from; v < to; v++ {
			it := item{row: (v * 37) % 100, v: v}
			if err := a.Put(it); err != nil {
				t.Fatal(err)
			}
			want[it.row/30] = append(want[it.row/30], it)
		}
	}
	var got [][]item
	give := func(p []item) error {
		if len(p) > 7 {
			t.Errorf("a piece of %d items, want at most 7", len(p))
		}
		got[len(got)-1] = append(got[len(got)-1], p...)
		return nil
	}
	put(0, 50)
	var piece []item
	got = append(got, nil)
	if err := a.TakeGroup(1, &piece, give); err != nil || !slices.Equal(got[0], want[1]) {
		t.Fatalf("group 1: %v, error %v; want %v", got[0], err, want[1])
	}
	want[1] = nil
	put(50, 120)
	got = got[:0]
	var groups [][]item
	n, err := a.Take(func(p []item) error {
		for _, it := range p {
			for len(groups) <= int(it.row/30) {
				groups = append(groups, nil)
			}
			groups[it.row/30] = append(groups[it.row/30], it)
		}
		return nil
	})
	if err != nil || n != 120*8 {
		t.Fatalf("Take: %d bytes, error %v; want %d bytes", n, err, 120*8)
	}
	for g := range want {
		if !slices.Equal(groups[g], want[g]) {
			t.Errorf("group %d handed back %v, want %v", g, groups[g], want[g])
		}
	}
	if n, err := a.Take(func([]item) error { t.Error("items after Take"); return nil }); n != 0 || err != nil {
		t.Errorf("a second Take: %d bytes, error %v", n, err)
	}
}

// An Aside without a directory for its files says what it failed to set
// aside.
func TestAsideNoDirectory(t *testing.T) {
	a := NewAside[item](NewScratchSpace("", 0), "test items", 10, 20)
	if err := a.Put(item{row: 3}); err == nil || !strings.Contains(err.Error(), "setting test items aside") {
		t.Errorf("error %v", err)
	}
}
