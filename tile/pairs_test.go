package tile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// pair is one report of Pairs.Near.
type pair struct {
	i, j int
	d    float64
}

// nearReference is Pairs.Near by its definition: every pair i < j of the
// tile in row-major order, reported when its distance is within either
// threshold, with lower applied after each report.
func nearReference(x []float64, p, r0, r1, c0, c1 int, rowMax, colMax []float64, lower func(i, j int, d float64)) []pair {
	var out []pair
	for i := r0; i < r1; i++ {
		for j := max(c0, i+1); j < c1; j++ {
			d := SqDist(x[i*p:(i+1)*p], x[j*p:(j+1)*p])
			if d <= rowMax[i-r0] || d <= colMax[j-c0] {
				out = append(out, pair{i, j, d})
				lower(i, j, d)
			}
		}
	}
	return out
}

// pairsData returns n rows of p features around an offset, on a coarse grid
// (ties), with every seventh row a copy of the one before.
func pairsData(n, p int, offset, scale float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 5))
	x := make([]float64, n*p)
	for i := range n {
		for q := range p {
			x[i*p+q] = offset + scale*math.Round(8*rng.NormFloat64())/8
		}
		if i%7 == 6 {
			copy(x[i*p:(i+1)*p], x[(i-1)*p:i*p])
		}
	}
	return x
}

// TestPairsNear checks Near, with each kernel this build has, against its
// definition: the same pairs, distances and order, with thresholds that
// start at +Inf, at exact distances of the tile (boundary cases), or
// random, and that the callback lowers as a nearest-neighbour search does.
func TestPairsNear(t *testing.T) {
	for _, tc := range []struct {
		name          string
		n, p          int
		offset, scale float64
		b             int
	}{
		{name: "p1", n: 90, p: 1, scale: 1, b: 37},
		{name: "p3 offset", n: 120, p: 3, offset: 1e6, scale: 1, b: 64},
		{name: "p16", n: 200, p: 16, scale: 1, b: 48},
		{name: "p37 tiny", n: 150, p: 37, scale: 1e-20, b: 70},
		{name: "p5 huge", n: 100, p: 5, scale: 1e12, b: 33},
		{name: "p2 out of float32", n: 60, p: 2, scale: 1e20, b: 17},
		{name: "p4 wide", n: 1300, p: 4, scale: 1, b: 600}, // masks of more than 64 words a group
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := pairsData(tc.n, tc.p, tc.offset, tc.scale, uint64(tc.n))
			for _, isa := range SupportedISAs() {
				ps, err := NewPairs(x, tc.n, tc.p, tc.b, isa)
				if err != nil {
					t.Fatal(err)
				}
				s := ps.NewScratch()
				rng := rand.New(rand.NewPCG(7, uint64(tc.p)))
				nb := ps.Blocks()
				reported := 0
				for I := range nb {
					for J := I; J < nb; J++ {
						r0, r1 := ps.Rows(I)
						c0, c1 := ps.Rows(J)
						rowMax, colMax := make([]float64, r1-r0), make([]float64, c1-c0)
						for _, th := range [][]float64{rowMax, colMax} {
							for e := range th {
								i, j := rng.IntN(tc.n), rng.IntN(tc.n)
								switch rng.IntN(3) {
								case 0:
									th[e] = math.Inf(1)
								case 1:
									th[e] = SqDist(x[i*tc.p:(i+1)*tc.p], x[j*tc.p:(j+1)*tc.p])
								default:
									th[e] = rng.Float64() * SqDist(x[i*tc.p:(i+1)*tc.p], x[j*tc.p:(j+1)*tc.p])
								}
							}
						}
						wantRow, wantCol := slices.Clone(rowMax), slices.Clone(colMax)
						// The callback lowers the thresholds to the distance
						// reported, as a search for the one nearest does.
						lower := func(rm, cm []float64) func(i, j int, d float64) {
							return func(i, j int, d float64) {
								rm[i-r0] = min(rm[i-r0], d)
								cm[j-c0] = min(cm[j-c0], d)
							}
						}
						want := nearReference(x, tc.p, r0, r1, c0, c1, wantRow, wantCol, lower(wantRow, wantCol))
						var got []pair
						low := lower(rowMax, colMax)
						ps.Near(s, I, J, rowMax, colMax, func(i, j int, d float64) {
							got = append(got, pair{i, j, d})
							low(i, j, d)
						})
						if !slices.Equal(got, want) {
							t.Fatalf("%s, tile %d,%d: %d pairs, want %d (first %v, want %v)", ps.Kernel(), I, J, len(got), len(want), head(got), head(want))
						}
						reported += len(got)
					}
				}
				if reported == 0 {
					t.Fatalf("%s: no pair reported", ps.Kernel())
				}
			}
		})
	}
}

func head(ps []pair) []pair { return ps[:min(3, len(ps))] }

// TestPairsWithin checks Within, with each kernel this build has, against
// the k-th smallest distance of each row to the other rows of its block:
// the same for the portable kernel, at or a little above it for a
// vectorized one (by at most its rounding bound, a few millionths of the
// distances, plus 1e-34 for float32 underflow), +Inf where the block has
// fewer than k other rows.
func TestPairsWithin(t *testing.T) {
	for _, tc := range []struct {
		name          string
		n, p, b, k    int
		offset, scale float64
	}{
		{name: "p1", n: 90, p: 1, b: 37, k: 5, scale: 1},
		{name: "p3 offset", n: 120, p: 3, b: 64, k: 1, offset: 1e6, scale: 1},
		{name: "p16", n: 200, p: 16, b: 48, k: 29, scale: 1},
		{name: "p37 tiny", n: 150, p: 37, b: 70, k: 10, scale: 1e-20},
		{name: "p5 huge", n: 100, p: 5, b: 33, k: 32, scale: 1e12},
		{name: "p2 short last block", n: 61, p: 2, b: 20, k: 3, scale: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := pairsData(tc.n, tc.p, tc.offset, tc.scale, uint64(tc.n))
			for _, isa := range SupportedISAs() {
				ps, err := NewPairs(x, tc.n, tc.p, tc.b, isa)
				if err != nil {
					t.Fatal(err)
				}
				s := ps.NewScratch()
				for I := range ps.Blocks() {
					r0, r1 := ps.Rows(I)
					got := make([]float64, r1-r0)
					ps.Within(s, I, tc.k, got)
					for i := r0; i < r1; i++ {
						var ds []float64
						for j := r0; j < r1; j++ {
							if j != i {
								ds = append(ds, SqDist(x[i*tc.p:(i+1)*tc.p], x[j*tc.p:(j+1)*tc.p]))
							}
						}
						want := math.Inf(1)
						if len(ds) >= tc.k {
							slices.Sort(ds)
							want = ds[tc.k-1]
						}
						g := got[i-r0]
						exact := ps.Kernel() == "go/float64" || math.IsInf(want, 1)
						if exact && g != want || !exact && !(want <= g && g <= want+1e-5*(want+ds[len(ds)-1])+1e-34) {
							t.Fatalf("%s, row %d: bound %v, want %v", ps.Kernel(), i, g, want)
						}
					}
				}
			}
		})
	}
}

// TestPairsKernel checks which kernel screens: the portable one when asked
// for, or when the features do not fit float32.
func TestPairsKernel(t *testing.T) {
	x := pairsData(10, 2, 0, 1, 1)
	for _, tc := range []struct {
		name string
		x    []float64
		isa  ISA
		want string
	}{
		{name: "go", x: x, isa: ISAGo, want: "go/float64"},
		{name: "huge", x: pairsData(10, 2, 0, 1e20, 1), want: "go/float64"},
	} {
		ps, err := NewPairs(tc.x, 10, 2, 4, tc.isa)
		if err != nil {
			t.Fatal(err)
		}
		if got := ps.Kernel(); got != tc.want {
			t.Errorf("%s: kernel %s, want %s", tc.name, got, tc.want)
		}
	}
	for _, isa := range SupportedISAs() {
		ps, err := NewPairs(x, 10, 2, 4, isa)
		if err != nil {
			t.Fatal(err)
		}
		want := isa.String() + "/float32"
		if isa == ISAGo {
			want = "go/float64"
		}
		if ps.Kernel() != want {
			t.Errorf("kernel %s, want %s", ps.Kernel(), want)
		}
	}
	best, err := NewPairs(x, 10, 2, 4, ISAAuto)
	if err != nil {
		t.Fatal(err)
	}
	if want := SupportedISAs()[0]; want != ISAGo && best.Kernel() != want.String()+"/float32" {
		t.Errorf("auto: kernel %s, want %s's", best.Kernel(), want)
	}
	if _, err := NewPairs(x, 11, 2, 4, ISAAuto); err == nil {
		t.Error("NewPairs of 20 values as 11×2: no error")
	}
	if _, err := NewPairs(x, 10, 2, 0, ISAAuto); err == nil {
		t.Error("NewPairs in blocks of 0: no error")
	}
}

// TestSqDist4 checks that the four distances at once have the bits of one
// at a time, and of the rows in the other order.
func TestSqDist4(t *testing.T) {
	for _, p := range []int{1, 3, 16, 37} {
		x := pairsData(5, p, 0, 1, uint64(p))
		d := [4]float64{}
		d[0], d[1], d[2], d[3] = SqDist4(x[:p], x[p:], x[2*p:], x[3*p:], x[4*p:])
		for e := range 4 {
			b := x[(e+1)*p : (e+2)*p]
			if want := SqDist(x[:p], b); d[e] != want || SqDist(b, x[:p]) != want {
				t.Errorf("p = %d, row %d: %v, one at a time %v", p, e+1, d[e], want)
			}
		}
	}
}

// BenchmarkPairsNear screens the upper triangle of 4,096 rows of 16
// features in tiles of 256 with thresholds that few pairs pass, and reports distance entries (all n² counted) a second.
func BenchmarkPairsNear(b *testing.B) {
	const n, p, bs = 4096, 16, 256
	x := pairsData(n, p, 0, 1, 9)
	for _, isa := range SupportedISAs() {
		ps, err := NewPairs(x, n, p, bs, isa)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(ps.Kernel(), func(b *testing.B) {
			s := ps.NewScratch()
			th := make([]float64, bs)
			for b.Loop() {
				for I := range ps.Blocks() {
					for J := I; J < ps.Blocks(); J++ {
						for e := range th {
							th[e] = 2 // few pairs pass, as late in a search
						}
						ps.Near(s, I, J, th, th, func(int, int, float64) {})
					}
				}
			}
			b.ReportMetric(float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// TestKthSmallest checks kthSmallest and kthBinned against a sort, on
// values with ties, a far outlier, negatives and a single value.
func TestKthSmallest(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	for _, tc := range []struct {
		name string
		a    []float32
	}{
		{name: "one", a: []float32{3}},
		{name: "equal", a: []float32{2, 2, 2, 2, 2}},
		{name: "ties", a: []float32{1, 0, 1, 0, 1, 2, 2, 0, 1}},
		{name: "outlier", a: []float32{1e30, 1, 2, 3, 4, 5, 6, 7, -1e-3}},
		{name: "random", a: func() []float32 {
			a := make([]float32, 255)
			for e := range a {
				a[e] = float32(rng.NormFloat64())
			}
			return a
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := slices.Clone(tc.a)
			slices.Sort(want)
			for k := 1; k <= len(tc.a); k++ {
				if got := kthSmallest(slices.Clone(tc.a), k); got != want[k-1] {
					t.Fatalf("kthSmallest k=%d: %v, want %v", k, got, want[k-1])
				}
				if got := kthBinned(tc.a, k, make([]float32, len(tc.a))); got != want[k-1] {
					t.Fatalf("kthBinned k=%d: %v, want %v", k, got, want[k-1])
				}
			}
		})
	}
}

// TestPairsTileMemory checks the pieces TileMemory names for each tile and
// kernel: block I's rows of the features, to the byte, first, and block
// J's among the rest; for a vectorized kernel, the others inside the
// memory its panels were packed in, none overlapping another, and the
// last two block I's panel of rows, the same for every J, and block J's
// panel of columns, the same for every I, with no two blocks' panels
// overlapping.
func TestPairsTileMemory(t *testing.T) {
	n, p, b := 21, 3, 8
	x := pairsData(n, p, 0, 1, 2)
	type span struct{ lo, hi uintptr }
	addr := func(s []byte) span {
		a := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		return span{a, a + uintptr(len(s))}
	}
	for _, isa := range SupportedISAs() {
		ps, err := NewPairs(x, n, p, b, isa)
		if err != nil {
			t.Fatal(err)
		}
		var panels span
		ps.Memory = func(size int) ([]byte, error) {
			mem := make([]byte, size)
			panels = addr(mem)
			return mem, nil
		}
		vector := ps.Kernel() != "go/float64"
		rows := func(I int) span {
			lo, hi := ps.Rows(I)
			return addr(unsafe.Slice((*byte)(unsafe.Pointer(&x[lo*p])), (hi-lo)*p*8))
		}
		nb := ps.Blocks()
		xr, xt := make([]span, nb), make([]span, nb)
		for I := range nb {
			for J := I; J < nb; J++ {
				var got []span
				ps.TileMemory(I, J, func(s []byte) { got = append(got, addr(s)) })
				// Each block's rows, and with a vectorized kernel its two
				// norms; then the two panels.
				each, last, blocks := 1, 0, 2
				if vector {
					each, last = 3, 2
				}
				if I == J {
					blocks = 1
				}
				want := blocks*each + last
				if len(got) != want {
					t.Fatalf("%v: tile %d,%d: %d pieces, want %d", isa, I, J, len(got), want)
				}
				if got[0] != rows(I) || !slices.Contains(got, rows(J)) {
					t.Errorf("%v: tile %d,%d: pieces %v, want the rows %v first and %v", isa, I, J, got, rows(I), rows(J))
				}
				for q, s := range got {
					if vector && s != rows(I) && s != rows(J) && (s.lo < panels.lo || s.hi > panels.hi || s.lo >= s.hi) {
						t.Errorf("%v: tile %d,%d: piece %v outside the panels %v", isa, I, J, s, panels)
					}
					for _, o := range got[:q] {
						if s.lo < o.hi && o.lo < s.hi {
							t.Errorf("%v: tile %d,%d: piece %v overlaps %v", isa, I, J, s, o)
						}
					}
				}
				if !vector {
					continue
				}
				r, c := got[len(got)-2], got[len(got)-1]
				if xr[I] == (span{}) {
					xr[I] = r
				}
				if xt[J] == (span{}) {
					xt[J] = c
				}
				if r != xr[I] || c != xt[J] {
					t.Errorf("%v: tile %d,%d: panels %v, %v, want %v of rows %d and %v of columns %d", isa, I, J, r, c, xr[I], I, xt[J], J)
				}
			}
		}
		if !vector {
			continue
		}
		all := slices.Concat(xr, xt)
		for q, s := range all {
			for _, o := range all[:q] {
				if s.lo < o.hi && o.lo < s.hi {
					t.Errorf("%v: panel %v overlaps panel %v", isa, s, o)
				}
			}
		}
	}
}
