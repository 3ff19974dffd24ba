package graph

import (
	"testing"

	"github.com/ssnmf/ssnmf/store"
)

// TestSpillWindows checks the windows of descent's spills: none where the
// lists are in memory, the tests' window for both where it is set, and
// out of core half the scratch memory's rows of lists for the reverse
// candidates, and an eighth for the offers, less a chunk of joins and no
// more than the anonymous memory left holds; at least spillWindowMin.
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
		memory           int64
		offers, reverses int
	}{
		{"in memory", heap, KNNOptions{ScratchMemory: 1 << 30}, 1 << 30, 0, 0},
		{"the tests' window", heap, KNNOptions{spillWindow: 300}, 0, 300, 300},
		{"4 GiB budget", file, KNNOptions{ScratchMemory: 1 << 30}, 1 << 30, (1<<30)/8/372 - joinRows, (1 << 30) / 2 / 372},
		{"100 MiB of it left", file, KNNOptions{ScratchMemory: 1 << 30}, 100 << 20, (100<<20)/372 - joinRows, (1 << 30) / 2 / 372},
		{"no budget", file, KNNOptions{}, 1 << 30, spillScratch/8/372 - joinRows, spillScratch / 2 / 372},
		{"no memory left", file, KNNOptions{}, 0, spillWindowMin, spillScratch / 2 / 372},
		{"a small budget", file, KNNOptions{ScratchMemory: 8 << 20}, 8 << 20, spillWindowMin, spillWindowMin},
	} {
		offers, reverses := tc.opt.spillWindows(tc.sc, m, tc.memory)
		if offers != tc.offers || reverses != tc.reverses {
			t.Errorf("%s: windows %d and %d rows, want %d and %d", tc.name, offers, reverses, tc.offers, tc.reverses)
		}
	}
}

// TestDescentBuffers checks descent's chunk of joins and backward's
// entries at a time: the defaults without a budget or with a large one,
// and at most half the scratch memory each with a small one, at least a
// block of rows and 2²⁰ entries.
func TestDescentBuffers(t *testing.T) {
	for _, tc := range []struct {
		memory      int64
		rows, chunk int
	}{
		{0, joinRows, backwardChunk},
		{1 << 30, joinRows, backwardChunk},
		{300 << 20, 3 * DescentBlock, backwardChunk},
		{168 << 20, DescentBlock, (84 << 20) / 8},
		{120 << 20, DescentBlock, (60 << 20) / 8},
		{1 << 20, DescentBlock, 1 << 20},
	} {
		rows, chunk := KNNOptions{ScratchMemory: tc.memory}.descentBuffers()
		if rows != tc.rows || chunk != tc.chunk {
			t.Errorf("scratch memory %d: %d rows and %d entries, want %d and %d", tc.memory, rows, chunk, tc.rows, tc.chunk)
		}
		if tc.memory > 0 && (rows > DescentBlock && int64(rows)*joinOfferBytes > tc.memory/2 || chunk > 1<<20 && int64(chunk)*8 > tc.memory/2) {
			t.Errorf("scratch memory %d: a buffer above its least takes more than half of it", tc.memory)
		}
	}
}
