package graph

import (
	"testing"

	"github.com/ssnmf/ssnmf/store"
)

// TestSpillWindows checks the windows of descent's spills: none where the
// lists are in memory, the tests' window for both where it is set, and
// out of core an eighth of the scratch memory's rows of lists for the
// offers and half for the reverse candidates, at least spillWindowMin.
func TestSpillWindows(t *testing.T) {
	const m = 30 // 372 bytes of lists a row
	file, err := store.NewScratchSpace(t.TempDir(), 0).New(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Release()
	heap, err := store.NewScratchSpace("", 0).New(4096)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name             string
		sc               *store.Scratch
		opt              KNNOptions
		offers, reverses int
	}{
		{"in memory", heap, KNNOptions{ScratchMemory: 1 << 30}, 0, 0},
		{"the tests' window", heap, KNNOptions{spillWindow: 300}, 300, 300},
		{"4 GiB budget", file, KNNOptions{ScratchMemory: 1 << 30}, (1 << 30) / 8 / 372, (1 << 30) / 2 / 372},
		{"no budget", file, KNNOptions{}, spillScratch / 8 / 372, spillScratch / 2 / 372},
		{"a small budget", file, KNNOptions{ScratchMemory: 8 << 20}, spillWindowMin, spillWindowMin},
	} {
		offers, reverses := tc.opt.spillWindows(tc.sc, m)
		if offers != tc.offers || reverses != tc.reverses {
			t.Errorf("%s: windows %d and %d rows, want %d and %d", tc.name, offers, reverses, tc.offers, tc.reverses)
		}
	}
}
