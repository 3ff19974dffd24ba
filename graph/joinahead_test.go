package graph

import (
	"slices"
	"testing"
	"unsafe"
)

// TestJoinAhead checks the pages joinAhead asks for: those of the
// features and bounds of the rows and their candidates, runs of pages
// with gaps of up to two merged, features and bounds apart, and nothing
// left marked for the next chunk.
func TestJoinAhead(t *testing.T) {
	const n, p, fw = 4096, 16, 2 // 32 rows a page of features, 512 of bounds
	a := &approxSearch{x: make([]float64, n*p), bound: make([]uint64, n), n: n, p: p}
	d := &descent{a: a, fw: fw, reverse: 1, fwd: slices.Repeat([]int32{none}, n*fw), rev: slices.Repeat([]int32{none}, n), filled: make([]bool, n)}
	// Row 0's reverse candidate comes after a forward list cut short;
	// row 1's, 3000, is the last round's (not filled), and not asked for.
	copy(d.fwd, []int32{5, none, 1000, none, ^100, 4000})
	copy(d.rev, []int32{^40, 3000, 130})
	d.filled[0], d.filled[2] = true, true
	ja := newJoinAhead(a)
	type span struct {
		mem    string
		lo, hi int
	}
	var got []span
	ja.fetch = func(b []byte) {
		at := uintptr(unsafe.Pointer(&b[0]))
		for name, mem := range map[string][]byte{"x": ja.x, "bound": ja.bound} {
			base := uintptr(unsafe.Pointer(&mem[0]))
			if at >= base && at < base+uintptr(len(mem)) {
				got = append(got, span{name, int(at - base), int(at-base) + len(b)})
			}
		}
	}
	for _, tc := range []struct {
		lo, hi int
		want   []span
	}{
		// Rows 0, 1, 5, 40, 1000: feature pages 0, 1 and 31, bound pages 0 and 1.
		{0, 2, []span{{"x", 0, 2 * aheadPage}, {"x", 31 * aheadPage, 32 * aheadPage}, {"bound", 0, 2 * aheadPage}}},
		// Rows 2, 100, 130, 4000: feature pages 0, 3 and 4 (a gap of two
		// read with them), 125; bound pages 0 and 7.
		{2, 3, []span{{"x", 0, 5 * aheadPage}, {"x", 125 * aheadPage, 126 * aheadPage}, {"bound", 0, aheadPage}, {"bound", 7 * aheadPage, 8 * aheadPage}}},
	} {
		got = got[:0]
		ja.ask(d, tc.lo, tc.hi)
		if !slices.Equal(got, tc.want) {
			t.Errorf("ask(%d, %d) asked for %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
		if slices.ContainsFunc(ja.marks, func(m uint64) bool { return m != 0 }) || len(ja.words) != 0 {
			t.Errorf("ask(%d, %d) left pages marked", tc.lo, tc.hi)
		}
	}
}
