package tile

// The kernel of sqdist_arm64.s, written by asmgen/sqdist_arm64.py (see
// generate.go): sqDistsColNEON computes SqDistsColumns' distances of n
// columns, a positive multiple of 8, p >= 1 features, with SqDist's bits.

//go:noescape
func sqDistsColNEON(d, a, xt *float64, p, ld, n int)

// sqDistsCol runs the NEON kernel on the whole groups of 8 of d's columns
// (d, a with p >= 1, and the block xt from its first column), and returns
// the columns it did.
func sqDistsCol(isa ISA, d, a, xt []float64, ld int) int {
	n8 := len(d) &^ 7
	if isa != ISANEON || !cpuHas(isa) || n8 == 0 {
		return 0
	}
	sqDistsColNEON(&d[0], &a[0], &xt[0], len(a), ld, n8)
	return n8
}

// sqDistPairs has no NEON kernel: SqDistPairs runs the portable loop.
func sqDistPairs(ISA, []float64, []float64, int, []int32, []int32) int { return 0 }
