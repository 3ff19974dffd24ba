package tile

// The kernels of sqdist_amd64.s, written by asmgen/sqdist.py (see
// generate.go): sqDistsCol{AVX512,AVX2} compute SqDistsColumns' distances
// of n >= 1 columns, p >= 1 features, and sqDistsRowsAVX2 SqDists' of the
// rows base+rows[:n] of x, n a positive multiple of 4, with SqDist's bits.

//go:noescape
func sqDistsColAVX512(d, a, xt *float64, p, ld, n int)

//go:noescape
func sqDistsColAVX2(d, a, xt *float64, p, ld, n int)

//go:noescape
func sqDistsRowsAVX2(d, a, x *float64, p, base int, rows *int32, n int)

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

// sqDistsRows runs family isa's kernel of SqDists on the whole groups of 4
// of rows (rows of x from base on, checked to lie in x), and returns the
// rows it did: the AVX2 kernel serves the AVX-512 family too.
func sqDistsRows(isa ISA, d, a, x []float64, base int, rows []int32) int {
	n4 := len(rows) &^ 3
	if n4 == 0 || len(a) == 0 || isa != ISAAVX512 && isa != ISAAVX2 || !cpuHas(ISAAVX2) {
		return 0
	}
	checkRows(len(x)/len(a), base, rows[:n4])
	sqDistsRowsAVX2(&d[0], &a[0], &x[0], len(a), base, &rows[0], n4)
	return n4
}
