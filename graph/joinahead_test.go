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
	const n, p, w = 4096, 16, 3 // 32 rows a page of features, 512 of bounds
	a := &approxSearch{x: make([]float64, n*p), bound: make([]uint64, n), n: n, p: p}
	d := &descent{a: a, width: w, cand: slices.Repeat([]int32{none}, n*w)}
	copy(d.cand[0:], []int32{5, ^40, none})
	copy(d.cand[w:], []int32{1000})
	copy(d.cand[2*w:], []int32{^100, 4000, 130})
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
