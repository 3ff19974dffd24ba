package tile

import "fmt"

// sqDistsPad is the room SqDistsColumns keeps past the distances, for the
// kernels that store a last group of columns whole.
const sqDistsPad = 32

// SqDistsColumns sets d[j-from] to SqDist(a, row j) for the rows j in
// [from, to) of a block held by columns: feature q of row j at xt[q*ld+j],
// p = len(a) features. Family isa's vector kernel takes a row a lane, each
// lane summing its rounded squares in feature order, so every family
// gives SqDist's bits; a family this CPU lacks, or without a kernel here,
// runs the portable loop. It returns d[:to-from], d grown if it has not
// room for 32 values more, which it may overwrite.
//
// The neighbour descent's local join holds its candidates so, to take the
// distances of each candidate to the later ones in one call. An xt with
// room for 32 values past its last row reads fastest: the AVX-512 kernel
// masks off the lanes past the rows, and a masked load whose lanes cross
// a page boundary out of xt costs far more on some CPUs (Zen 4) than the
// arithmetic.
func SqDistsColumns(isa ISA, d, a, xt []float64, ld, from, to int) []float64 {
	n, p := to-from, len(a)
	if n <= 0 {
		return d[:0]
	}
	if from < 0 || to > ld || (p > 0 && len(xt) < (p-1)*ld+to) {
		panic(fmt.Sprintf("tile: SqDistsColumns: rows [%d, %d) of %d features beyond a block of %d values, %d a feature", from, to, p, len(xt), ld))
	}
	// The kernels store whole groups of columns: room for 32 more.
	if cap(d) < n+sqDistsPad {
		d = make([]float64, n, n+sqDistsPad)
	}
	d = d[:n]
	done := 0
	if p > 0 {
		done = sqDistsCol(isa, d, a, xt[from:], ld)
	}
	for j := done; j < n; j++ {
		var s float64
		for q, v := range a {
			t := v - xt[q*ld+from+j]
			s += float64(t * t)
		}
		d[j] = s
	}
	return d
}
