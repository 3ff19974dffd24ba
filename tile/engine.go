package tile

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/ssnmf/ssnmf/internal/ordered"
)

// Source produces tiles of a symmetric, nonnegative n×n matrix P.
type Source interface {
	// N returns the order of P.
	N() int
	// Tile writes P[r0:r1, c0:c1] into dst, row-major with stride c1-c0.
	// dst has room for (r1-r0)*(c1-c0) values.
	Tile(dst []float64, r0, r1, c0, c1 int) error
}

// DefaultBlockSize is the tile edge used when Engine.BlockSize is zero:
// a 256×256 float64 tile is 512 KiB, small enough to stay in cache while it
// is consumed.
const DefaultBlockSize = 256

// Engine runs passes over the tiles of a Source. Its zero value is not
// usable: Source must be set. An Engine holds no state between passes but
// memory for Tile, may be used by one pass at a time, and must not be
// copied after first use.
type Engine struct {
	Source    Source
	BlockSize int // tile edge, at most n; DefaultBlockSize if 0
	Workers   int // goroutines; runtime.GOMAXPROCS(0) if 0

	// Progress, if not nil, is called after each tile of a pass has been
	// added to the output, with the pass's name ("P·W", "P·S" or "stats")
	// and the numbers of tiles done and in all. It is called from one
	// goroutine at a time and should return quickly.
	Progress func(pass string, done, total int)

	// Generic, if set, makes the passes use the portable pure-Go kernel
	// even where a vectorized one is available (see Kernel), for
	// comparison and as a reference.
	Generic bool

	gens sync.Pool // *tileGen: the memory of Tile
}

// N returns the order of P.
func (e *Engine) N() int { return e.Source.N() }

func (e *Engine) block() int {
	if e.BlockSize > 0 {
		return e.BlockSize
	}
	return DefaultBlockSize
}

func (e *Engine) workers() int {
	if e.Workers > 0 {
		return e.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// grid enumerates the upper-triangular tiles (I <= J) in row-major order.
type grid struct {
	n, b, nb int
	start    []int // start[I] is the index of tile (I, I)
}

func newGrid(n, b int) grid {
	nb := (n + b - 1) / b
	g := grid{n: n, b: b, nb: nb, start: make([]int, nb+1)}
	for i := range nb {
		g.start[i+1] = g.start[i] + nb - i
	}
	return g
}

func (g grid) tiles() int { return g.start[g.nb] }

// bounds returns the rows [r0, r1) and columns [c0, c1) of tile t.
func (g grid) bounds(t int) (r0, r1, c0, c1 int) {
	i := sort.SearchInts(g.start, t+1) - 1
	j := i + t - g.start[i]
	return i * g.b, min(g.n, (i+1)*g.b), j * g.b, min(g.n, (j+1)*g.b)
}

// partial holds one tile's contributions before they are committed.
type partial struct {
	tile           []float64 // the tile itself, B×B
	toRows, toCols []float64 // contributions to rows r0:r1 and to rows c0:c1, B×k each
	sumRows        []float64 // row sums of the tile, B
	sumCols        []float64 // column sums of the tile, B
	frob           float64   // sum of squares of the tile's entries, counted twice off the diagonal
	r0, r1, c0, c1 int
	scratch        any // the vectorized kernel's private memory, if one runs

	// The contributions the commit adds: outR for rows r0:r1, outC for
	// rows c0:c1. Row-major (element (i, c) at i*ldR+c) unless the pass is
	// class-major (at c*ldR+i; see fastKernel.classMajor). They are
	// toRows and toCols with stride k unless a vectorized kernel points
	// them at its own accumulators.
	outR, outC []float64
	ldR, ldC   int
}

// consume adds a tile's contributions to p.toRows and p.toCols (and the
// sums if wanted); it is the only part that differs between passes.
type consume func(p *partial, diag bool)

func (e *Engine) run(ctx context.Context, pass string, in passInput, dst, rowSums []float64, frob *float64, fn consume) error {
	k := in.k
	n := e.Source.N()
	if dst != nil && len(dst) != n*k {
		return fmt.Errorf("tile pass: output has %d values, want %d×%d", len(dst), n, k)
	}
	if rowSums != nil && len(rowSums) != n {
		return fmt.Errorf("tile pass: row sums have %d values, want %d", len(rowSums), n)
	}
	clear(dst)
	clear(rowSums)
	if n == 0 {
		return nil
	}
	sums := rowSums != nil || frob != nil
	var fsum float64
	b := min(e.block(), n)
	g := newGrid(n, b)
	in.sums = sums
	var fast fastKernel
	if !e.Generic {
		fast, _ = newFastKernel(e.Source, in, b)
	}
	// A class-major pass accumulates each row block of dst as a k×h
	// matrix, so that a tile's contributions are added by contiguous
	// vectors, and transposes the blocks at the end.
	classMajor := fast != nil && k > 0 && fast.classMajor()
	if classMajor && !fast.whole() {
		return fmt.Errorf("tile pass %s: a class-major kernel must handle whole tiles", pass)
	}
	// A kernel that handles whole tiles needs neither the float64 tile
	// nor the portable consumers' partial sums.
	whole := fast != nil && fast.whole()
	newBuf := func() *partial {
		p := &partial{}
		if fast != nil {
			p.scratch = fast.newScratch()
		}
		if !whole {
			p.tile = make([]float64, b*b)
			if k > 0 {
				p.toRows = make([]float64, b*k)
				p.toCols = make([]float64, b*k)
			}
		}
		if sums {
			p.sumRows = make([]float64, b)
			p.sumCols = make([]float64, b)
		}
		return p
	}
	work := func(_ context.Context, t int, p *partial) error {
		r0, r1, c0, c1 := g.bounds(t)
		p.r0, p.r1, p.c0, p.c1 = r0, r1, c0, c1
		h, w := r1-r0, c1-c0
		diag := r0 == c0
		p.outR, p.outC, p.ldR, p.ldC = p.toRows, p.toCols, k, k
		if fast != nil {
			if fast.tile(p.scratch, p, diag) {
				return nil
			}
			if whole {
				return fmt.Errorf("tile rows %d:%d cols %d:%d: the vectorized kernel declined a tile", r0, r1, c0, c1)
			}
		}
		tl := p.tile[:h*w]
		if fast == nil {
			if err := e.Source.Tile(tl, r0, r1, c0, c1); err != nil {
				return fmt.Errorf("tile rows %d:%d cols %d:%d: %w", r0, r1, c0, c1, err)
			}
		}
		if k > 0 {
			clear(p.toRows[:h*k])
			if !diag {
				clear(p.toCols[:w*k])
			}
			fn(p, diag)
		}
		if sums {
			p.frob = tileSums(tl, h, w, w, diag, p.sumRows, p.sumCols)
		}
		return nil
	}
	commit := func(t int, p *partial) error {
		if e.Progress != nil {
			defer e.Progress(pass, t+1, g.tiles())
		}
		diag := p.r0 == p.c0
		if k > 0 {
			addBlock(dst, k, p.r0, p.r1, p.outR, p.ldR, classMajor)
			if !diag {
				addBlock(dst, k, p.c0, p.c1, p.outC, p.ldC, classMajor)
			}
		}
		if sums {
			fsum += p.frob
			if rowSums != nil {
				addTo(rowSums[p.r0:p.r1], p.sumRows)
				if !diag {
					addTo(rowSums[p.c0:p.c1], p.sumCols)
				}
			}
		}
		return nil
	}
	if err := ordered.Run(ctx, e.workers(), g.tiles(), newBuf, work, commit); err != nil {
		return err
	}
	if classMajor {
		tmp := make([]float64, b*k)
		for r0 := 0; r0 < n; r0 += b {
			r1 := min(n, r0+b)
			transposeBlock(dst[r0*k:r1*k], tmp, r1-r0, k)
		}
	}
	if frob != nil {
		*frob = fsum
	}
	return nil
}

// addTo sets dst[i] += src[i] for i < len(dst), with vector instructions
// where they are built in (addFloat64s); the sums are the same bits.
func addTo(dst, src []float64) { addFloat64s(dst, src[:len(dst)]) }

// addBlock adds a tile's contributions to the rows r0:r1 of dst (n×k):
// out holds them row-major with stride ld, or, in a class-major pass,
// class-major with stride ld, and dst's rows r0:r1 are then stored
// class-major too (element (i, c) at dst[r0*k + c*(r1-r0) + i]).
func addBlock(dst []float64, k, r0, r1 int, out []float64, ld int, classMajor bool) {
	h := r1 - r0
	switch {
	case classMajor:
		blk := dst[r0*k : r1*k]
		for c := range k {
			addTo(blk[c*h:(c+1)*h], out[c*ld:])
		}
	case ld == k:
		addTo(dst[r0*k:r1*k], out)
	default:
		for i := range h {
			addTo(dst[(r0+i)*k:(r0+i+1)*k], out[i*ld:])
		}
	}
}

// transposeBlock turns blk, an h×k row block of a class-major pass stored
// as k×h, into h×k row-major, using tmp (at least h*k values).
func transposeBlock(blk, tmp []float64, h, k int) {
	tmp = tmp[:h*k]
	copy(tmp, blk)
	for c := range k {
		for i, v := range tmp[c*h : (c+1)*h] {
			blk[i*k+c] = v
		}
	}
}

// tileSums writes the row sums and the column sums of an h×w tile
// (row-major with stride ld) and returns its contribution to ||P||_F^2.
func tileSums(tl []float64, h, w, ld int, diag bool, rows, cols []float64) float64 {
	var sq float64
	clear(cols[:w])
	for i := range h {
		var s float64
		for j, v := range tl[i*ld : i*ld+w] {
			s += v
			sq += v * v
			cols[j] += v
		}
		rows[i] = s
	}
	if !diag {
		sq *= 2
	}
	return sq
}

// Stats computes the row sums of P into rowSums (length n, or nil) and
// returns ||P||_F^2, in one pass.
func (e *Engine) Stats(ctx context.Context, rowSums []float64) (frobSq float64, err error) {
	err = e.run(ctx, "stats", passInput{}, nil, rowSums, &frobSq, nil)
	return frobSq, err
}

// Mul sets dst = P·W, where W and dst are n×k and row-major. If rowSums is
// not nil the same pass also writes the row sums of P into it and returns
// ||P||_F^2; otherwise frobSq is 0.
func (e *Engine) Mul(ctx context.Context, dst, w []float64, k int, rowSums []float64) (frobSq float64, err error) {
	n := e.Source.N()
	if k < 1 || len(w) != n*k {
		return 0, fmt.Errorf("tile pass P·W: W has %d values, want %d×%d", len(w), n, k)
	}
	var frob *float64
	if rowSums != nil {
		frob = &frobSq
	}
	err = e.run(ctx, "P·W", passInput{k: k, w: w}, dst, rowSums, frob, func(p *partial, diag bool) {
		h, wd := p.r1-p.r0, p.c1-p.c0
		tl := p.tile[:h*wd]
		for i := range h {
			yi := p.toRows[i*k : (i+1)*k]
			wi := w[(p.r0+i)*k : (p.r0+i+1)*k]
			for j, v := range tl[i*wd : (i+1)*wd] {
				axpy(yi, v, w[(p.c0+j)*k:(p.c0+j+1)*k])
				if !diag {
					axpy(p.toCols[j*k:(j+1)*k], v, wi)
				}
			}
		}
	})
	return frobSq, err
}

// axpy sets y += a·x.
func axpy(y []float64, a float64, x []float64) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] += a * v
	}
}

// MulOneHot sets dst = P·S, where S is the n×k one-hot matrix with S[i][s[i]]
// = 1 and dst is n×k, row-major: dst[i][c] is the sum of P[i][l] over the l
// with s[l] = c. The pass costs one scatter-add per entry of P, whatever k.
func (e *Engine) MulOneHot(ctx context.Context, dst []float64, s []int32, k int) error {
	n := e.Source.N()
	if len(s) != n {
		return fmt.Errorf("tile pass P·S: %d column indices, want %d", len(s), n)
	}
	for i, c := range s {
		if c < 0 || int(c) >= k {
			return fmt.Errorf("tile pass P·S: row %d has column %d, want 0 <= c < %d", i, c, k)
		}
	}
	return e.run(ctx, "P·S", passInput{k: k, s: s}, dst, nil, nil, func(p *partial, diag bool) {
		h, wd := p.r1-p.r0, p.c1-p.c0
		tl := p.tile[:h*wd]
		sc := s[p.c0:p.c1]
		sr := s[p.r0:p.r1]
		for i := range h {
			yi := p.toRows[i*k : (i+1)*k]
			row := tl[i*wd : (i+1)*wd]
			for j, v := range row {
				yi[sc[j]] += v
			}
			if !diag {
				ci := int(sr[i])
				for j, v := range row {
					p.toCols[j*k+ci] += v
				}
			}
		}
	})
}
