package tile

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/ssnmf/ssnmf/store"
)

// Pairs screens the pairs of rows of a feature matrix by squared Euclidean
// distance, one tile of pairs at a time: the work of an exact
// nearest-neighbour search over the upper triangle of the tile grid, whose
// blocks are the rows [I·b, (I+1)·b) for a block edge b.
//
// The distances it reports are exact, SqDist of the two rows, whichever
// kernel screens them. The portable kernel computes every distance that
// way. The vectorized kernel (the Gaussian's micro-kernels, in float32 by
// the norms identity on centred features, without the exponential) computes
// a tile of approximate distances and recomputes exactly only the pairs
// whose approximation is within a proven rounding bound of a threshold, so
// the two kernels report the same pairs with the same bits.
type Pairs struct {
	// Memory, if not nil, returns size bytes of zeroed memory, aligned for
	// 8-byte words, in which the vectorized kernel packs its panels (about
	// 8·n·p + 12·n bytes; see Kernel), for example a memory-mapped scratch
	// file, so that they need not be on the heap. Set it before the first
	// use.
	Memory func(size int) ([]byte, error)

	x       []float64
	n, p, b int
	isa     ISA // resolved

	once sync.Once
	vec  *pairsVector // nil: the portable kernel
	err  error        // a fault of Memory's memory while packing (Pack)
}

// NewPairs returns the screen of the n rows of x (n×p, row-major) in tiles
// of edge b, run by the kernels of family k (ISAGo: the portable kernel;
// ISAAuto: the fastest this CPU has). Pairs keeps x, which must not change
// while it is in use; it is safe for concurrent use with one PairScratch
// per goroutine.
func NewPairs(x []float64, n, p, b int, k ISA) (*Pairs, error) {
	if n < 0 || p < 0 || len(x) != n*p {
		return nil, fmt.Errorf("tile: %d values as %d rows of %d features", len(x), n, p)
	}
	if b < 1 {
		return nil, fmt.Errorf("tile: block edge %d, want at least 1", b)
	}
	k, err := k.Resolve()
	if err != nil {
		return nil, err
	}
	return &Pairs{x: x, n: n, p: p, b: b, isa: k}, nil
}

// Pack packs the vectorized kernel's panels, if it has any, now and on
// workers goroutines, rather than on first use on the caller's. Its error
// is a fault of the memory Memory returned, where that is a mapped file;
// Pack after the first use packs nothing.
func (ps *Pairs) Pack(workers int) error {
	ps.once.Do(func() { ps.pack(workers) })
	return ps.err
}

// Blocks returns the number of blocks of rows, ⌈n/b⌉.
func (ps *Pairs) Blocks() int { return (ps.n + ps.b - 1) / ps.b }

// Rows returns the rows of block I, [I·b, min(n, (I+1)·b)).
func (ps *Pairs) Rows(I int) (lo, hi int) { return I * ps.b, min(ps.n, (I+1)*ps.b) }

// vector returns the vectorized screen, packing it on first use, or nil.
func (ps *Pairs) vector() *pairsVector {
	ps.once.Do(func() { ps.pack(1) })
	return ps.vec
}

// pack packs the vectorized screen's panels on workers goroutines, if
// the kernel has a screen.
func (ps *Pairs) pack(workers int) {
	if ps.isa == ISAGo || ps.p == 0 {
		return
	}
	mem := ps.Memory
	if mem == nil {
		mem = func(size int) ([]byte, error) {
			return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(make([]uint64, (size+7)/8)))), size), nil
		}
	}
	ps.vec, ps.err = newPairsVector(ps.isa, ps.x, ps.n, ps.p, ps.b, workers, mem)
}

// Kernel names the kernel that screens the pairs: its family and
// precision, "avx2/float32", "avx512/float32" or "neon/float32" for a
// vectorized one, "go/float64" for the portable one. A vectorized kernel
// needs features whose centred values stay below 1e15 in magnitude
// (float32 must hold their squares without overflow); the portable one
// runs otherwise. It packs its panels, 2·n·p float32, on first use.
func (ps *Pairs) Kernel() string {
	if v := ps.vector(); v != nil {
		return v.k.isa.String() + "/float32"
	}
	return "go/float64"
}

// PairScratch is one goroutine's memory for Pairs.Near and Pairs.Within.
type PairScratch struct {
	vec any       // the vectorized kernel's tile, or nil
	d   []float64 // the portable kernel's distances of a row, for Within
}

// NewScratch returns one goroutine's memory for Near.
func (ps *Pairs) NewScratch() *PairScratch {
	s := &PairScratch{}
	if v := ps.vector(); v != nil {
		s.vec = v.newScratch()
	}
	return s
}

// Near calls near(i, j, d) for each pair of a row i of block I and a row j
// of block J (I <= J) with i < j whose squared distance d = SqDist(x_i, x_j)
// is at most rowMax[i-I·b] or colMax[j-J·b], in row-major order (by i,
// then j).
//
// near may lower the entries of rowMax and colMax, and the screen then
// applies the lowered thresholds to the pairs that follow, so the pairs
// reported, and the order, are the same for both kernels. rowMax and
// colMax are at least as long as their blocks.
func (ps *Pairs) Near(s *PairScratch, I, J int, rowMax, colMax []float64, near func(i, j int, d float64)) {
	r0, r1 := ps.Rows(I)
	c0, c1 := ps.Rows(J)
	if I < 0 || I > J || J >= ps.Blocks() || len(rowMax) < r1-r0 || len(colMax) < c1-c0 {
		panic(fmt.Sprintf("tile: Near of tile %d,%d of %d blocks with %d and %d thresholds", I, J, ps.Blocks(), len(rowMax), len(colMax)))
	}
	if v := ps.vector(); v != nil && s.vec != nil {
		v.near(s.vec, I, J, rowMax, colMax, near)
		return
	}
	x, p := ps.x, ps.p
	var ds [4]float64
	for i := r0; i < r1; i++ {
		xi := x[i*p : (i+1)*p]
		for j0 := max(c0, i+1); j0 < c1; j0 += len(ds) {
			nj := min(len(ds), c1-j0)
			if nj == len(ds) {
				ds[0], ds[1], ds[2], ds[3] = SqDist4(xi, x[j0*p:], x[(j0+1)*p:], x[(j0+2)*p:], x[(j0+3)*p:])
			} else {
				for e := range nj {
					ds[e] = SqDist(xi, x[(j0+e)*p:(j0+e+1)*p])
				}
			}
			for e, d := range ds[:nj] {
				if j := j0 + e; d <= rowMax[i-r0] || d <= colMax[j-c0] {
					near(i, j, d)
				}
			}
		}
	}
}

// Within sets out[li], for each row i = I·b+li of block I, to an upper
// bound of the squared distance SqDist of row i to its k-th nearest other
// row of the block (k >= 1), or to +Inf where the block has fewer than k
// other rows. The portable kernel gives that distance itself; the
// vectorized one the k-th smallest of its approximate distances plus their
// rounding bound (see Kernel), a little above it. Either bounds the
// distance of the k-th nearest other row of all, which a search may use as
// a row's threshold before it has found k candidates. out is at least as
// long as the block.
func (ps *Pairs) Within(s *PairScratch, I, k int, out []float64) {
	r0, r1 := ps.Rows(I)
	if I < 0 || I >= ps.Blocks() || k < 1 || len(out) < r1-r0 {
		panic(fmt.Sprintf("tile: Within of block %d of %d, k = %d, with %d bounds", I, ps.Blocks(), k, len(out)))
	}
	if r1-r0-1 < k {
		for li := range r1 - r0 {
			out[li] = math.Inf(1)
		}
		return
	}
	if v := ps.vector(); v != nil && s.vec != nil {
		v.within(s.vec, I, k, out)
		return
	}
	x, p := ps.x, ps.p
	s.d = slices.Grow(s.d[:0], r1-r0)[:r1-r0]
	for i := r0; i < r1; i++ {
		for j := r0; j < r1; j++ {
			s.d[j-r0] = SqDist(x[i*p:(i+1)*p], x[j*p:(j+1)*p])
		}
		s.d[i-r0] = math.Inf(1) // not its own neighbour
		out[i-r0] = kthSmallest(s.d, k)
	}
}

// kthSmallest returns the k-th smallest (1 <= k <= len(a)) of a, which
// holds no NaN, and leaves a reordered: Hoare's quickselect with the
// median of the first, middle and last values as pivot.
func kthSmallest[F float32 | float64](a []F, k int) F {
	lo, hi, k := 0, len(a)-1, k-1
	for lo < hi {
		x, y, z := a[lo], a[(lo+hi)/2], a[hi]
		pivot := max(min(x, y), min(max(x, y), z))
		i, j := lo, hi
		for i <= j {
			for a[i] < pivot {
				i++
			}
			for a[j] > pivot {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}

// SqDistPairs sets d[e] to SqDist(x_i[e], x_j[e]) for the rows of x (p
// features a row), and returns d[:len(i)]; d is grown if it is too short,
// and j must be as long as i. Family isa's vector kernel, where this CPU
// has one, takes four pairs at a time, a pair a lane, each lane summing
// its rounded squares in feature order; the portable loop overlaps four
// pairs' sums (SqDist4's where the four share their first row). Either
// way every distance has SqDist's bits. A row outside x panics.
func SqDistPairs(isa ISA, d, x []float64, p int, i, j []int32) []float64 {
	if len(j) != len(i) {
		panic(fmt.Sprintf("tile: SqDistPairs of %d rows with %d", len(i), len(j)))
	}
	d = slices.Grow(d[:0], len(i))[:len(i)]
	if p == 0 {
		clear(d)
		return d
	}
	e := sqDistPairs(isa, d, x, p, i, j)
	row := func(r int32) []float64 { return x[int(r)*p : (int(r)+1)*p] }
	for ; e < len(i); e += 4 {
		ie, je := fourPairs(i, j, e)
		var ds [4]float64
		if a := row(ie[0]); ie[1] == ie[0] && ie[2] == ie[0] && ie[3] == ie[0] {
			ds[0], ds[1], ds[2], ds[3] = SqDist4(a, row(je[0]), row(je[1]), row(je[2]), row(je[3]))
		} else {
			ds[0], ds[1], ds[2], ds[3] = sqDistPair4(p, a, row(je[0]), row(ie[1]), row(je[1]), row(ie[2]), row(je[2]), row(ie[3]), row(je[3]))
		}
		copy(d[e:], ds[:])
	}
	return d
}

// sqDistPair4 returns the squared distances of a0 to b0, ..., a3 to b3 (p
// features each), each with the bits of SqDist, their sums overlapped.
func sqDistPair4(p int, a0, b0, a1, b1, a2, b2, a3, b3 []float64) (d0, d1, d2, d3 float64) {
	a0, b0, a1, b1, a2, b2, a3, b3 = a0[:p], b0[:p], a1[:p], b1[:p], a2[:p], b2[:p], a3[:p], b3[:p]
	for q := range p {
		t0, t1, t2, t3 := a0[q]-b0[q], a1[q]-b1[q], a2[q]-b2[q], a3[q]-b3[q]
		d0 += float64(t0 * t0)
		d1 += float64(t1 * t1)
		d2 += float64(t2 * t2)
		d3 += float64(t3 * t3)
	}
	return d0, d1, d2, d3
}

// fourPairs returns the pairs e to e+3 of i and j, the last pair repeated
// past their end.
func fourPairs(i, j []int32, e int) (ie, je [4]int32) {
	for f := range ie {
		g := min(e+f, len(i)-1)
		ie[f], je[f] = i[g], j[g]
	}
	return ie, je
}

// SqDist4 returns the squared distances of a to b0, b1, b2 and b3 (each at
// least as long as a), each with the bits of SqDist: the four sums are
// independent, which lets the processor overlap them where SqDist's one
// chain of additions waits on each.
func SqDist4(a, b0, b1, b2, b3 []float64) (d0, d1, d2, d3 float64) {
	p := len(a)
	b0, b1, b2, b3 = b0[:p], b1[:p], b2[:p], b3[:p]
	for q, v := range a {
		t0, t1, t2, t3 := v-b0[q], v-b1[q], v-b2[q], v-b3[q]
		d0 += float64(t0 * t0)
		d1 += float64(t1 * t1)
		d2 += float64(t2 * t2)
		d3 += float64(t3 * t3)
	}
	return d0, d1, d2, d3
}

// TileMemory calls f with each piece of memory that screening tile
// (I, J) reads (Near): the rows of the features of blocks I and J and, for
// the vectorized kernel, block I's panel of rows, block J's panel of
// columns and both blocks' norms. A caller whose memory is mapped from
// files may ask for those pages ahead of a tile (store.Prefetch). It
// changes nothing.
func (ps *Pairs) TileMemory(I, J int, f func(b []byte)) {
	v := ps.vector()
	for k, K := range [2]int{I, J} {
		lo, hi := ps.Rows(K)
		if k == 1 && J == I || lo >= hi {
			break
		}
		f(store.AsBytes(ps.x[lo*ps.p : hi*ps.p]))
		if v != nil {
			f(store.AsBytes(v.n32[K*v.bp : (K+1)*v.bp]))
			f(store.AsBytes(v.n64[lo:hi]))
		}
	}
	if v != nil {
		bp, p := v.bp, ps.p
		f(store.AsBytes(v.xr[I*bp*p : (I+1)*bp*p]))
		f(store.AsBytes(v.xt[J*bp*p : (J+1)*bp*p]))
	}
}
