package fw

import "golang.org/x/sys/cpu"

// The kernels of the dense strip products in strip_amd64.s, written by
// asmgen/strip.py (see generate.go): rowsMulAdd{8,16}{AVX512,AVX2} are
// rowsMulAddGo and colsMulAdd{8,16}{AVX512,AVX2} colsMulAddGo for kp = 8
// and 16, with one difference in the arithmetic: each term is added by a
// fused multiply-add (acc = t·d + acc, rounded once), where the Go loops
// round the product before adding it. The terms are added in the same
// order (l, resp. i) in every kernel, and none skips the zeros of t, so
// the AVX-512 and AVX2 kernels give the same bits, and agree with the Go
// loops to the rounding of the products (at most half an ulp of each
// product's magnitude per term). Each needs the instructions of its family
// and is called only through a stripKernels whose CPU check passed; h and
// wd must be positive and every pointer must cover its block (the Go
// wrappers below check both).

//go:noescape
func rowsMulAdd8AVX512(acc, t *float64, h, wd int, d *float64)

//go:noescape
func rowsMulAdd16AVX512(acc, t *float64, h, wd int, d *float64)

//go:noescape
func colsMulAdd8AVX512(y, t *float64, h, wd int, d *float64)

//go:noescape
func colsMulAdd16AVX512(y, t *float64, h, wd int, d *float64)

//go:noescape
func rowsMulAdd8AVX2(acc, t *float64, h, wd int, d *float64)

//go:noescape
func rowsMulAdd16AVX2(acc, t *float64, h, wd int, d *float64)

//go:noescape
func colsMulAdd8AVX2(y, t *float64, h, wd int, d *float64)

//go:noescape
func colsMulAdd16AVX2(y, t *float64, h, wd int, d *float64)

// stripKernels is a family of the assembly kernels of the strip products.
type stripKernels struct {
	name          string
	has           bool // this CPU runs them
	rows8, rows16 func(acc, t *float64, h, wd int, d *float64)
	cols8, cols16 func(y, t *float64, h, wd int, d *float64)
}

// The families, fastest first, with whether this CPU (and its operating
// system, which must save the vector registers) runs them: the conditions
// of tile's kernels of the same names.
var (
	stripAVX512 = stripKernels{name: "avx512",
		has:   cpu.X86.HasAVX512F && cpu.X86.HasAVX2 && cpu.X86.HasFMA,
		rows8: rowsMulAdd8AVX512, rows16: rowsMulAdd16AVX512,
		cols8: colsMulAdd8AVX512, cols16: colsMulAdd16AVX512}
	stripAVX2 = stripKernels{name: "avx2",
		has:   cpu.X86.HasAVX2 && cpu.X86.HasFMA,
		rows8: rowsMulAdd8AVX2, rows16: rowsMulAdd16AVX2,
		cols8: colsMulAdd8AVX2, cols16: colsMulAdd16AVX2}
)

// stripKernelsOf returns the family of strip kernels named family (a
// tile.ISA's name: "avx512" or "avx2") if this CPU runs it, the fastest
// family it runs for "" or "auto", and nil, the Go loops, otherwise ("go",
// or a family it lacks).
func stripKernelsOf(family string) *stripKernels {
	for _, k := range []*stripKernels{&stripAVX512, &stripAVX2} {
		if k.has && (family == "" || family == "auto" || family == k.name) {
			return k
		}
	}
	return nil
}

// rowsMulAdd is rowsMulAddGo with the kernels of family k for kp = 8 or
// 16 (fused multiply-adds, see above), and the Go loops for k nil or
// another kp.
func rowsMulAdd(k *stripKernels, acc, t []float64, h, wd int, d []float64, kp int) {
	if k == nil || (kp != 8 && kp != 16) {
		rowsMulAddGo(acc, t, h, wd, d, kp)
		return
	}
	k.rowsMulAdd(acc, t, h, wd, d, kp)
}

// colsMulAdd is colsMulAddGo with the kernels of family k for kp = 8 or
// 16 (fused multiply-adds, see above), and the Go loops for k nil or
// another kp.
func colsMulAdd(k *stripKernels, y, t []float64, h, wd int, d []float64, kp int) {
	if k == nil || (kp != 8 && kp != 16) {
		colsMulAddGo(y, t, h, wd, d, kp)
		return
	}
	k.colsMulAdd(y, t, h, wd, d, kp)
}

// rowsMulAdd runs the family's rowsMulAdd kernel for kp = 8 or 16; it
// panics if a slice is shorter than its block.
func (k *stripKernels) rowsMulAdd(acc, t []float64, h, wd int, d []float64, kp int) {
	if h <= 0 || wd <= 0 {
		return
	}
	_, _, _ = acc[h*kp-1], t[h*wd-1], d[wd*kp-1]
	switch kp {
	case 8:
		k.rows8(&acc[0], &t[0], h, wd, &d[0])
	case 16:
		k.rows16(&acc[0], &t[0], h, wd, &d[0])
	default:
		panic("fw: strip kernel for kp other than 8 or 16")
	}
}

// colsMulAdd runs the family's colsMulAdd kernel for kp = 8 or 16; it
// panics if a slice is shorter than its block.
func (k *stripKernels) colsMulAdd(y, t []float64, h, wd int, d []float64, kp int) {
	if h <= 0 || wd <= 0 {
		return
	}
	_, _, _ = y[wd*kp-1], t[h*wd-1], d[h*kp-1]
	switch kp {
	case 8:
		k.cols8(&y[0], &t[0], h, wd, &d[0])
	case 16:
		k.cols16(&y[0], &t[0], h, wd, &d[0])
	default:
		panic("fw: strip kernel for kp other than 8 or 16")
	}
}
