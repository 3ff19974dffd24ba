package tile

// The kernels of sqdist_amd64.s, written by asmgen/sqdist.py (see
// generate.go): sqDistsCol{AVX512,AVX2} compute SqDistsColumns' distances
// of n >= 1 columns, p >= 1 features, with SqDist's bits.

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
