package fw

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// stripVariant is one way of running the strip products, forced.
type stripVariant struct {
	name  string
	fused bool // fused multiply-adds (the assembly), else rounded products (Go)
	rows  func(acc, t []float64, h, wd int, d []float64, kp int)
	cols  func(y, t []float64, h, wd int, d []float64, kp int)
}

// stripVariants returns the Go loops and the assembly families this CPU
// runs.
func stripVariants(t *testing.T) []stripVariant {
	vs := []stripVariant{{name: "go", rows: rowsMulAddGo, cols: colsMulAddGo}}
	for _, k := range []*stripKernels{&stripAVX512, &stripAVX2} {
		if !k.has {
			t.Logf("this CPU lacks %s: not tested", k.name)
			continue
		}
		vs = append(vs, stripVariant{name: k.name, fused: true, rows: k.rowsMulAdd, cols: k.colsMulAdd})
	}
	return vs
}

// mulAddRef returns base + A·B for the rows×inner matrix A of the entries
// a(r, l) and the inner×kp matrix b, each element a chain of one operation
// a term, in order of l: with fused, math.FMA (the assembly's arithmetic,
// zeros of A included); without, the product rounded and then added, zeros
// of A skipped (the Go loops'). bound is, per element, (2·inner+2)·2⁻⁵³
// times |base| + Σ|a·b|: a bound on the difference between the two, each
// within (inner+1)·2⁻⁵³ of the exact sum, to first order.
func mulAddRef(base []float64, rows, inner, kp int, a func(r, l int) float64, b []float64, fused bool) (out, bound []float64) {
	out, bound = slices.Clone(base), make([]float64, len(base))
	for r := range rows {
		for c := range kp {
			s, mag := out[r*kp+c], math.Abs(out[r*kp+c])
			for l := range inner {
				av, bv := a(r, l), b[l*kp+c]
				mag += math.Abs(av * bv)
				switch {
				case fused:
					s = math.FMA(av, bv, s)
				case av != 0:
					s += float64(av * bv)
				}
			}
			out[r*kp+c] = s
			bound[r*kp+c] = float64(2*inner+2) * 0x1p-53 * mag
		}
	}
	return out, bound
}

// TestStripKernels runs every strip product this CPU has, forced, on
// random shapes: the assembly families must give the bits of a fused
// reference (math.FMA in the same order), hence of each other, and the Go
// loops those of a rounded-product reference; the two references must
// agree within the bound of mulAddRef. The outputs are cut from longer
// buffers whose tails must stay untouched.
func TestStripKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	rnd := func(n int, zeros float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			if rng.Float64() >= zeros {
				v[i] = rng.NormFloat64() * math.Exp2(float64(rng.IntN(9)-4))
			}
		}
		return v
	}
	const tail = 8
	vs := stripVariants(t)
	for _, kp := range []int{8, 16} {
		for _, h := range []int{0, 1, 3, 4, 5, 9} {
			for _, wd := range []int{0, 1, 7, 33} {
				// P's tiles are dense; the changes d mostly zeros.
				tl := rnd(h*wd, 0.05)
				drow, dcol := rnd(wd*kp, 0.7), rnd(h*kp, 0.7)
				acc0, y0 := rnd(h*kp+tail, 0), rnd(wd*kp+tail, 0)
				rowsA := func(i, l int) float64 { return tl[i*wd+l] }
				colsA := func(j, i int) float64 { return tl[i*wd+j] }
				for _, op := range []struct {
					name      string
					base, b   []float64
					rows, inn int
					a         func(r, l int) float64
					run       func(v stripVariant, out []float64)
				}{
					{"rows", acc0, drow, h, wd, rowsA, func(v stripVariant, out []float64) { v.rows(out, tl, h, wd, drow, kp) }},
					{"cols", y0, dcol, wd, h, colsA, func(v stripVariant, out []float64) { v.cols(out, tl, h, wd, dcol, kp) }},
				} {
					n := op.rows * kp
					fusedRef, bound := mulAddRef(op.base[:n], op.rows, op.inn, kp, op.a, op.b, true)
					goRef, _ := mulAddRef(op.base[:n], op.rows, op.inn, kp, op.a, op.b, false)
					for e := range n {
						if math.Abs(fusedRef[e]-goRef[e]) > bound[e] {
							t.Fatalf("kp %d h %d wd %d %s: element %d: fused %v, rounded %v, beyond the bound %g",
								kp, h, wd, op.name, e, fusedRef[e], goRef[e], bound[e])
						}
					}
					for _, v := range vs {
						what := fmt.Sprintf("kp %d h %d wd %d %s, %s", kp, h, wd, op.name, v.name)
						buf := slices.Clone(op.base)
						op.run(v, buf[:n:n])
						want := goRef
						if v.fused {
							want = fusedRef
						}
						for e := range n {
							if math.Float64bits(buf[e]) != math.Float64bits(want[e]) {
								t.Fatalf("%s: element %d = %v, want %v (fused %v)", what, e, buf[e], want[e], v.fused)
							}
						}
						if !slices.Equal(buf[n:], op.base[n:]) {
							t.Fatalf("%s: wrote past the output", what)
						}
					}
				}
			}
		}
	}
}

// TestStripKernelsShort checks that the wrappers of the assembly refuse a
// slice shorter than its block.
func TestStripKernelsShort(t *testing.T) {
	for _, v := range stripVariants(t)[1:] {
		for _, kp := range []int{8, 16} {
			h, wd := 5, 3
			acc, tl, d := make([]float64, h*kp), make([]float64, h*wd), make([]float64, wd*kp)
			for name, f := range map[string]func(){
				"rows acc": func() { v.rows(acc[:len(acc)-1], tl, h, wd, d, kp) },
				"rows t":   func() { v.rows(acc, tl[:len(tl)-1], h, wd, d, kp) },
				"rows d":   func() { v.rows(acc, tl, h, wd, d[:len(d)-1], kp) },
				"cols y":   func() { v.cols(d[:len(d)-1], tl, h, wd, acc, kp) },
				"cols t":   func() { v.cols(d, tl[:len(tl)-1], h, wd, acc, kp) },
				"cols d":   func() { v.cols(d, tl, h, wd, acc[:len(acc)-1], kp) },
			} {
				func() {
					defer func() {
						if recover() == nil {
							t.Errorf("%s kp %d %s: a short slice did not panic", v.name, kp, name)
						}
					}()
					f()
				}()
			}
		}
	}
}

// TestStripDispatch checks that the strip products run with the fastest
// family this CPU has.
func TestStripDispatch(t *testing.T) {
	var want *stripKernels
	switch {
	case stripAVX512.has:
		want = &stripAVX512
	case stripAVX2.has:
		want = &stripAVX2
	}
	if got := stripKernelsOf(""); got != want {
		t.Fatalf("auto: %v, want %v", got, want)
	}
	if got := stripKernelsOf("go"); got != nil {
		t.Errorf("go: %v, want the Go loops", got)
	}
	for _, k := range []*stripKernels{&stripAVX512, &stripAVX2} {
		if got := stripKernelsOf(k.name); k.has != (got == k) {
			t.Errorf("%s: %v, the CPU runs it: %v", k.name, got, k.has)
		}
	}
}
