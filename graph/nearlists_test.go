package graph

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ssnmf/ssnmf/store"
)

// TestNearLists checks the lists held near a moving chunk of rows: offers
// made through them, chunk after chunk, leave the lists the same as
// offers made to the lists themselves, a row's list is read only when an
// offer first reaches it, and written back only if it changed.
func TestNearLists(t *testing.T) {
	const n, m, chunk, half = 1000, 5, 64, 100
	rng := rand.New(rand.NewPCG(3, 4))
	fill := func() *best {
		b := newBest(n, m)
		for r := range n {
			b.offer(r, 0, int32(r))
			for range 2 * m {
				b.offer(r, float64(rng.IntN(50)), rng.Int32N(n))
			}
		}
		return b
	}
	want := fill()
	got := &best{m: m, d: slices.Clone(want.d), j: slices.Clone(want.j), cnt: slices.Clone(want.cnt)}
	near, err := newNearLists(store.NewScratchSpace("", 0), got, chunk+2*half)
	if err != nil {
		t.Fatal(err)
	}
	defer near.release()
	changed := make([]bool, n)
	// A row's list in the file is poisoned once it is read, so that a
	// second read, or a write-back of a list that did not change, shows.
	read := make([]bool, n)
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		near.cover(max(0, lo-half), min(n, hi+half), changed)
		for range 300 {
			u := max(0, lo-half) + rng.IntN(min(n, hi+half)-max(0, lo-half))
			d, v := float64(rng.IntN(100)), rng.Int32N(n)
			want.offer(u, d, v)
			s := near.slot(u)
			if !read[u] {
				read[u] = true
				got.cnt[u] = -1
			}
			if near.held.offer(s, d, v) {
				changed[u] = true
			}
		}
	}
	near.flush(changed)
	for r := range n {
		if !read[r] {
			continue
		}
		if !changed[r] {
			if got.cnt[r] != -1 {
				t.Fatalf("row %d: written back though its list did not change", r)
			}
			got.cnt[r] = want.cnt[r] // as it was: the test poisoned it
		}
	}
	if !slices.Equal(got.d, want.d) || !slices.Equal(got.j, want.j) || !slices.Equal(got.cnt, want.cnt) {
		t.Error("the lists offered through nearLists differ from those offered directly")
	}
	unchanged := 0
	for r := range n {
		if read[r] && !changed[r] {
			unchanged++
		}
	}
	if unchanged == 0 {
		t.Error("no list read and left as it was: the test checks no write-back")
	}
	if near.lo != n || near.hi != n {
		t.Errorf("after flush: rows [%d, %d) held, want none", near.lo, near.hi)
	}
}
