package tile

import "fmt"

// The kernels of sqdist_amd64.s, written by asmgen/sqdist.py (see
// generate.go): sqDistsCol{AVX512,AVX2} compute SqDistsColumns' distances
// of n >= 1 columns, p >= 1 features, and sqDistPairsAVX2 SqDistPairs' of
// n pairs of rows of x, n a positive multiple of 4, with SqDist's bits.

//go:noescape
func sqDistsColAVX512(d, a, xt *float64, p, ld, n int)

//go:noescape
func sqDistsColAVX2(d, a, xt *float64, p, ld, n int)

// sqDistsCol runs family isa's kernel on d (len n >= 1), a (p >= 1) and
// the block xt from its first column, and returns the columns it did: n,
// or 0 for a family without a kernel here.
func sqDistsCol(isa ISA, d, a, xt []float64, ld int) int {
	switch {
	case isa == ISAAVX512 && cpuHas(isa):
		sqDistsColAVX512(&d[0], &a[0], &xt[0], len(a), ld, len(d))
	case isa == ISAAVX2 && cpuHas(isa):
		sqDistsColAVX2(&d[0], &a[0], &xt[0], len(a), ld, len(d))
	default:
		return 0
	}
	return len(d)
}

//go:noescape
func sqDistPairsAVX2(d, x *float64, p int, i, j *int32, n int)

// sqDistPairs runs family isa's kernel of SqDistPairs (p >= 1, rows
// checked to lie in x) and returns the pairs it did: all of them, the last
// one to three with the last pair repeated, or none for a family without
// a kernel here. The AVX2 kernel serves the AVX-512 family too.
func sqDistPairs(isa ISA, d, x []float64, p int, i, j []int32) int {
	n := len(i)
	if n == 0 || isa != ISAAVX512 && isa != ISAAVX2 || !cpuHas(ISAAVX2) {
		return 0
	}
	checkRows(len(x)/p, i)
	checkRows(len(x)/p, j)
	n4 := n &^ 3
	if n4 > 0 {
		sqDistPairsAVX2(&d[0], &x[0], p, &i[0], &j[0], n4)
	}
	if n4 < n {
		ie, je := fourPairs(i, j, n4)
		var ds [4]float64
		sqDistPairsAVX2(&ds[0], &x[0], p, &ie[0], &je[0], 4)
		copy(d[n4:], ds[:])
	}
	return n
}

// checkRows panics unless every row of rows lies in [0, n): the kernels
// index x without Go's checks.
func checkRows(n int, rows []int32) {
	for _, r := range rows {
		if r < 0 || int(r) >= n {
			panic(fmt.Sprintf("tile: row %d of %d", r, n))
		}
	}
}
