package graph

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ssnmf/ssnmf/tile"
)

// TestPartitionLeaves checks that Partition permutes the rows, the same way
// for any workers, into compact leaves.
func TestPartitionLeaves(t *testing.T) {
	n, p, leaf := 5000, 4, 100
	x := clustered(n, p, 2)
	orig := slices.Clone(x)
	order, err := Partition(context.Background(), x, n, p, leaf, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	// The same order on any workers.
	for _, workers := range []int{1, 5} {
		xw := slices.Clone(orig)
		ow, err := Partition(context.Background(), xw, n, p, leaf, 0, workers)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ow, order) || !slices.Equal(xw, x) {
			t.Errorf("workers=%d: another order", workers)
		}
	}
	seen := make([]bool, n)
	for q, i := range order {
		if seen[i] {
			t.Fatalf("row %d twice", i)
		}
		seen[i] = true
		if !slices.Equal(x[q*p:(q+1)*p], orig[int(i)*p:int(i+1)*p]) {
			t.Fatalf("position %d does not hold row %d", q, i)
		}
	}
	// A leaf is compact: its rows are much nearer each other than random
	// rows are.
	var in, out float64
	for q := 0; q+1 < n; q++ {
		d := tile.SqDist(x[q*p:(q+1)*p], x[(q+1)*p:(q+2)*p])
		if q/leaf == (q+1)/leaf {
			in += d
		}
		out += tile.SqDist(x[q*p:(q+1)*p], orig[((q*7919)%n)*p:((q*7919)%n+1)*p])
	}
	if in > 0.5*out {
		t.Errorf("sum of distances within leaves %.4g, to random rows %.4g: the leaves are not compact", in, out)
	}
}

// TestCutRank checks the radix selection against a sort, with ties of
// keys that only the rows break (all keys equal, a few values, -0 and +0,
// infinities), on ranges small enough to sort at once and large enough for
// every byte to be counted.
func TestCutRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name string
		n    int
		key  func(i int) float64
	}{
		{"normal", 10_000, func(int) float64 { return rng.NormFloat64() }},
		{"few", 100, func(int) float64 { return rng.NormFloat64() }},
		{"all equal", 9_000, func(int) float64 { return 1.5 }},
		{"three values", 7_000, func(i int) float64 { return float64(i%3) - 1 }},
		{"signed zeros and infinities", 6_000, func(i int) float64 {
			return []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), -2}[i%5]
		}},
		{"one apart", 5_000, func(i int) float64 { return math.Nextafter(1, 2+float64(i%2)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo := 7 // a range that does not start at 0
			pt := &partition{key: make([]uint64, lo+tc.n+3), order: make([]int32, lo+tc.n+3)}
			for i := range pt.key {
				pt.key[i] = sortable(tc.key(i))
				pt.order[i] = int32((i * 7919) % 100_003) // distinct rows, not in order
			}
			want := make([]rank, 0, tc.n)
			for i := lo; i < lo+tc.n; i++ {
				want = append(want, pt.rankOf(i))
			}
			slices.SortFunc(want, rankCmp)
			for _, r := range []int{0, 1, tc.n / 3, tc.n / 2, tc.n - 2, tc.n - 1} {
				if got := pt.cutRank(lo, lo+tc.n, r); got != want[r] {
					t.Errorf("rank of order %d: %v, want %v", r, got, want[r])
				}
			}
		})
	}
}

// TestPartitionSplit checks one split against its definition: the cut-lo
// rows of least rank go to the front, each row with its order and
// features, and every row's key is its projection on its half's direction,
// from a sample evenly spaced among the half's rows in their old order.
func TestPartitionSplit(t *testing.T) {
	const p, leaf = 3, 40
	for _, tc := range []struct{ n, lo, hi, cut int }{
		{1000, 0, 1000, 480},
		{1000, 120, 900, 520},
		{1000, 100, 190, 140}, // a first half of one leaf: no keys for it
		{1000, 0, 1000, 999},
	} {
		x := points(tc.n, p, uint64(tc.cut))
		for i := 0; i < tc.n; i += 5 {
			copy(x[i*p:(i+1)*p], x[(i/10)*p:(i/10+1)*p]) // ties of keys
		}
		pt := &partition{x: slices.Clone(x), p: p, leaf: leaf, seed: 3, order: make([]int32, tc.n), key: make([]uint64, tc.n)}
		for i := range pt.order {
			pt.order[i] = int32((i * 37) % tc.n)
		}
		v := []float64{1, -0.5, 0.25}
		for i := range tc.n {
			pt.project(i, v)
		}
		before := &partition{x: slices.Clone(pt.x), p: p, leaf: leaf, seed: 3, order: slices.Clone(pt.order), key: slices.Clone(pt.key)}
		var ranks []rank
		for i := tc.lo; i < tc.hi; i++ {
			ranks = append(ranks, pt.rankOf(i))
		}
		slices.SortFunc(ranks, rankCmp)
		pivot := ranks[tc.cut-tc.lo]

		pt.split(tc.lo, tc.hi, tc.cut)

		var dirs [2][]float64 // the halves' directions by definition
		for h, r := range [][2]int{{tc.lo, tc.cut}, {tc.cut, tc.hi}} {
			size := r[1] - r[0]
			if size <= leaf {
				continue
			}
			var members []int
			for i := tc.lo; i < tc.hi; i++ {
				if before.rankOf(i).less(pivot) == (h == 0) {
					members = append(members, i)
				}
			}
			s := min(partitionSample, size)
			pos := make([]int, s)
			for k := range pos {
				pos[k] = members[k*size/s]
			}
			dirs[h] = before.direction(r[0], pos)
		}
		at := map[int32]int{} // a row's old position
		for i := tc.lo; i < tc.hi; i++ {
			at[before.order[i]] = i
		}
		for i := range tc.n {
			row := pt.order[i]
			if i < tc.lo || i >= tc.hi {
				if row != before.order[i] || pt.key[i] != before.key[i] {
					t.Fatalf("split [%d,%d): position %d outside it changed", tc.lo, tc.hi, i)
				}
				continue
			}
			old, ok := at[row]
			if !ok || !slices.Equal(pt.x[i*p:(i+1)*p], before.x[old*p:(old+1)*p]) {
				t.Fatalf("split [%d,%d): position %d holds row %d with other features", tc.lo, tc.hi, i, row)
			}
			h := 0
			if i >= tc.cut {
				h = 1
			}
			if before.rankOf(old).less(pivot) != (h == 0) {
				t.Fatalf("split [%d,%d) at %d: row %d in the wrong half", tc.lo, tc.hi, tc.cut, row)
			}
			if dirs[h] != nil {
				want := partition{x: pt.x[i*p : (i+1)*p], p: p, key: []uint64{0}}
				want.project(0, dirs[h])
				if pt.key[i] != want.key[0] {
					t.Fatalf("split [%d,%d): position %d's key %x, want its projection on its half's direction %x", tc.lo, tc.hi, i, pt.key[i], want.key[0])
				}
			}
		}
	}
}

// rankCmp is rank.less as slices.SortFunc takes it.
func rankCmp(a, b rank) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}
