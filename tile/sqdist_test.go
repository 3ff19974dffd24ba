package tile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSqDistsColumns checks that every family this CPU runs gives
// SqDist's bits for the rows [from, to) of a block held by columns, for
// feature counts and row ranges below, at and above the kernels' vectors,
// in d's array when it has room for 32 more.
func TestSqDistsColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, isa := range SupportedISAs() {
		for _, p := range []int{0, 1, 3, 16, 17, 33} {
			for _, c := range []struct{ ld, from, to int }{
				{1, 0, 1}, {5, 1, 4}, {8, 0, 8}, {9, 0, 9}, {16, 3, 16}, {17, 0, 17},
				{33, 1, 33}, {40, 2, 35}, {70, 5, 70}, {100, 0, 97},
			} {
				t.Run(fmt.Sprintf("%s/p=%d/%d-%d", isa, p, c.from, c.to), func(t *testing.T) {
					rows := make([][]float64, c.ld)
					xt := make([]float64, p*c.ld)
					for j := range rows {
						rows[j] = make([]float64, p)
						for q := range p {
							rows[j][q] = rng.NormFloat64() * 1e3
							xt[q*c.ld+j] = rows[j][q]
						}
					}
					a := make([]float64, p)
					for q := range a {
						a[q] = rng.NormFloat64() * 1e3
					}
					n := c.to - c.from
					buf := make([]float64, n+sqDistsPad)
					d := SqDistsColumns(isa, buf[:0], a, xt, c.ld, c.from, c.to)
					if len(d) != n || &d[0] != &buf[0] {
						t.Fatalf("got %d distances (in d's array: %v), want %d in it", len(d), &d[0] == &buf[0], n)
					}
					for j, v := range d {
						if want := SqDist(a, rows[c.from+j]); math.Float64bits(v) != math.Float64bits(want) {
							t.Fatalf("row %d: %v, want SqDist's %v", c.from+j, v, want)
						}
					}
				})
			}
		}
	}
}

// TestSqDistPairs checks that every family this CPU runs gives SqDist's
// bits for pairs of rows of x picked in any order, repeated, for feature
// counts below, at and above the kernels' 4-feature loads and pair counts
// around their groups of 4; and that a row outside x, or rows of two
// lengths, panic.
func TestSqDistPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 7))
	const n = 40
	for _, isa := range SupportedISAs() {
		for _, p := range []int{0, 1, 2, 3, 4, 5, 7, 8, 16, 17, 36} {
			x := make([]float64, n*p)
			for i := range x {
				x[i] = rng.NormFloat64() * 1e3
			}
			for _, m := range []int{0, 1, 3, 4, 5, 8, 11, 29} {
				t.Run(fmt.Sprintf("%s/p=%d/pairs=%d", isa, p, m), func(t *testing.T) {
					i, j := make([]int32, m), make([]int32, m)
					for e := range i {
						i[e], j[e] = int32(rng.IntN(n)), int32(rng.IntN(n))
					}
					d := SqDistPairs(isa, make([]float64, 2), x, p, i, j)
					if len(d) != m {
						t.Fatalf("%d distances, want %d", len(d), m)
					}
					for e, v := range d {
						a, b := x[int(i[e])*p:int(i[e]+1)*p], x[int(j[e])*p:int(j[e]+1)*p]
						if want := SqDist(a, b); math.Float64bits(v) != math.Float64bits(want) {
							t.Fatalf("pair %d (%d, %d): %v, want SqDist's %v", e, i[e], j[e], v, want)
						}
					}
				})
			}
		}
		t.Run(isa.String()+"/outside", func(t *testing.T) {
			x := make([]float64, 4*n)
			for _, c := range []struct{ i, j []int32 }{
				{[]int32{0, 1, 2, n}, []int32{0, 1, 2, 3}},
				{[]int32{0, 1, 2, 3}, []int32{0, -1, 2, 3}},
				{[]int32{0, 0, 0, 0, n}, []int32{0, 0, 0, 0, 1}},
				{[]int32{0, 1}, []int32{0}},
			} {
				func() {
					defer func() {
						if recover() == nil {
							t.Errorf("pairs %v, %v of %d rows: no panic", c.i, c.j, n)
						}
					}()
					SqDistPairs(isa, nil, x, 4, c.i, c.j)
				}()
			}
		})
	}
}

// BenchmarkSqDistsColumns times the distances of one row to 48 rows of 16
// features (a local join's candidates), held by columns, against
// SqDistPairs on the same rows held by rows.
func BenchmarkSqDistsColumns(b *testing.B) {
	const p, c = 16, 48
	rng := rand.New(rand.NewPCG(1, 1))
	x, xt := make([]float64, c*p), make([]float64, c*p+sqDistsPad)
	for j := range c {
		for q := range p {
			x[j*p+q] = rng.NormFloat64()
			xt[q*c+j] = x[j*p+q]
		}
	}
	self, rows := make([]int32, c-1), make([]int32, c-1)
	for i := range rows {
		rows[i] = int32(i + 1)
	}
	d := make([]float64, c+sqDistsPad)
	for _, isa := range SupportedISAs() {
		b.Run("pairs/"+isa.String(), func(b *testing.B) {
			for b.Loop() {
				d = SqDistPairs(isa, d, x, p, self, rows)
			}
			b.ReportMetric(float64(c-1)*float64(b.N)/b.Elapsed().Seconds(), "dists/s")
		})
		b.Run("columns/"+isa.String(), func(b *testing.B) {
			for b.Loop() {
				d = SqDistsColumns(isa, d, x[:p], xt, c, 1, c)
			}
			b.ReportMetric(float64(c-1)*float64(b.N)/b.Elapsed().Seconds(), "dists/s")
		})
	}
}
