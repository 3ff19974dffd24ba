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

	// ISA is the family of the passes' kernels: ISAAuto, the zero value,
	// for the fastest this CPU runs, ISAGo for the portable pure-Go kernel,
	// for comparison and as a reference (see Kernel). A family the CPU
	// lacks makes every pass fail.
	ISA ISA

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

// span is the share of a pass that a run computes: every row of P (whole)
// or the rows of the row blocks [b0, b1) of the grid (a part).
type span struct {
	whole  bool
	b0, b1 int
}

// run runs a pass over the tiles of sp. dst and rowSums hold the rows of
// the span. frob gets one value for each row block of the span: the sum
// of the squares of its tiles in the upper triangle, counted twice off
// the diagonal, added up tile by tile from the diagonal out.
//
// A whole pass visits each tile of the upper triangle once and adds its
// contributions to the rows of both of its blocks; a part visits, for each
// of its row blocks R, the tiles (min(R, J), max(R, J)) for J = 0, 1, ...
// and adds the contributions to R alone. Either way the contributions to
// a row block are added in the order of J, each computed from the same
// tile, so a part has the same bits as the whole pass's rows.
func (e *Engine) run(ctx context.Context, pass string, in passInput, sp span, dst, rowSums, frob []float64, fn consume) error {
	k := in.k
	n := e.Source.N()
	b := min(e.block(), n)
	g := newGrid(n, b)
	if sp.whole {
		sp.b0, sp.b1 = 0, g.nb
	}
	rows := min(n, sp.b1*b) - sp.b0*b // the rows of the span
	off := sp.b0 * b                  // the first
	if dst != nil && len(dst) != rows*k {
		return fmt.Errorf("tile pass: output has %d values, want %d×%d", len(dst), rows, k)
	}
	if rowSums != nil && len(rowSums) != rows {
		return fmt.Errorf("tile pass: row sums have %d values, want %d", len(rowSums), rows)
	}
	if frob != nil && len(frob) != sp.b1-sp.b0 {
		return fmt.Errorf("tile pass: %d squared norms, want one for each of %d row blocks", len(frob), sp.b1-sp.b0)
	}
	clear(dst)
	clear(rowSums)
	clear(frob)
	if n == 0 || rows == 0 {
		return nil
	}
	sums := rowSums != nil || frob != nil
	var rowFrob float64 // the current row block's share of frob
	in.sums = sums
	isa, err := e.ISA.Resolve()
	if err != nil {
		return fmt.Errorf("tile pass %s: %w", pass, err)
	}
	fast, _ := newFastKernel(isa, e.Source, in, b)
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
	// tileOf returns task t's tile and the row block it serves (-1 in a
	// whole pass, where it serves both of its blocks).
	tasks := g.tiles()
	tileOf := func(t int) (r0, r1, c0, c1, serves int) {
		r0, r1, c0, c1 = g.bounds(t)
		return r0, r1, c0, c1, -1
	}
	if !sp.whole {
		tasks = (sp.b1 - sp.b0) * g.nb
		tileOf = func(t int) (r0, r1, c0, c1, serves int) {
			R, J := sp.b0+t/g.nb, t%g.nb
			I, J := min(R, J), max(R, J)
			return I * b, min(n, (I+1)*b), J * b, min(n, (J+1)*b), R
		}
	}
	work := func(_ context.Context, t int, p *partial) error {
		r0, r1, c0, c1, _ := tileOf(t)
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
			defer e.Progress(pass, t+1, tasks)
		}
		_, _, _, _, serves := tileOf(t)
		diag := p.r0 == p.c0
		// The tile adds its row side to the block of its rows, and its
		// column side to the block of its columns, of those in the span.
		toRows := serves < 0 || serves*b == p.r0
		toCols := !diag && (serves < 0 || serves*b == p.c0)
		if k > 0 {
			if toRows {
				addBlock(dst, k, p.r0-off, p.r1-off, p.outR, p.ldR, classMajor)
			}
			if toCols {
				addBlock(dst, k, p.c0-off, p.c1-off, p.outC, p.ldC, classMajor)
			}
		}
		if sums {
			if rowSums != nil && toRows {
				addTo(rowSums[p.r0-off:p.r1-off], p.sumRows)
			}
			if rowSums != nil && toCols {
				addTo(rowSums[p.c0-off:p.c1-off], p.sumCols)
			}
			if toRows {
				rowFrob += p.frob
				if p.c1 == n && frob != nil { // the last tile of the row block
					frob[p.r0/b-sp.b0] = rowFrob
					rowFrob = 0
				}
			}
		}
		return nil
	}
	if err := ordered.Run(ctx, e.workers(), tasks, newBuf, work, commit); err != nil {
		return err
	}
	if classMajor {
		tmp := make([]float64, b*k)
		for r0 := 0; r0 < rows; r0 += b {
			r1 := min(rows, r0+b)
			transposeBlock(dst[r0*k:r1*k], tmp, r1-r0, k)
		}
	}
	return nil
}

// FrobSq returns ||P||_F^2 from the squared norms of the row blocks of a
// pass with sums (MulPart), all of them in order: the value that Mul and
// Stats return.
func FrobSq(blocks []float64) float64 {
	var s float64
	for _, v := range blocks {
		s += v
	}
	return s
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
	frob := e.blockNorms()
	err = e.run(ctx, "stats", passInput{}, span{whole: true}, nil, rowSums, frob, nil)
	return FrobSq(frob), err
}

// blockNorms returns room for the squared norms of the row blocks.
func (e *Engine) blockNorms() []float64 {
	n := e.Source.N()
	b := max(1, min(e.block(), n))
	return make([]float64, (n+b-1)/b)
}

// Mul sets dst = P·W, where W and dst are n×k and row-major. If rowSums is
// not nil the same pass also writes the row sums of P into it and returns
// ||P||_F^2; otherwise frobSq is 0.
func (e *Engine) Mul(ctx context.Context, dst, w []float64, k int, rowSums []float64) (frobSq float64, err error) {
	var frob []float64
	if rowSums != nil {
		frob = e.blockNorms()
	}
	err = e.mul(ctx, span{whole: true}, dst, w, k, rowSums, frob)
	return FrobSq(frob), err
}

// MulPart is one part of Mul, for running a pass as several tasks: it sets
// dst to the rows r0:r1 of P·W, where r0, r1 = PartRows(part, parts), and
// if rowSums is not nil, the row sums of those rows and each of their row
// blocks' share of ||P||_F^2 in blockFrob (BlockNorms(part, parts) values).
// The rows have the same bits as Mul's, and FrobSq of the shares of all the
// parts in order is Mul's frobSq. A part costs about twice its share of
// the tiles of Mul, which computes each tile once for both of its blocks.
func (e *Engine) MulPart(ctx context.Context, part, parts int, dst, w []float64, k int, rowSums, blockFrob []float64) error {
	sp, err := e.span(part, parts)
	if err != nil {
		return err
	}
	if rowSums != nil && blockFrob == nil {
		return fmt.Errorf("tile pass P·W part %d of %d: row sums without the squared norms", part, parts)
	}
	return e.mul(ctx, sp, dst, w, k, rowSums, blockFrob)
}

func (e *Engine) mul(ctx context.Context, sp span, dst, w []float64, k int, rowSums, frob []float64) error {
	n := e.Source.N()
	if k < 1 || len(w) != n*k {
		return fmt.Errorf("tile pass P·W: W has %d values, want %d×%d", len(w), n, k)
	}
	return e.run(ctx, "P·W", passInput{k: k, w: w}, sp, dst, rowSums, frob, func(p *partial, diag bool) {
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
}

// PartRows returns the rows [r0, r1) of part part of parts: the row blocks
// of the tile grid cut into parts runs of consecutive blocks, as even as
// blocks allow. A part may be empty when there are more parts than blocks.
func (e *Engine) PartRows(part, parts int) (r0, r1 int) {
	n := e.Source.N()
	b := max(1, min(e.block(), n))
	b0, b1 := partBlocks(part, parts, (n+b-1)/b)
	return min(n, b0*b), min(n, b1*b)
}

// BlockNorms returns the number of row blocks of part part of parts: the
// length of MulPart's blockFrob.
func (e *Engine) BlockNorms(part, parts int) int {
	n := e.Source.N()
	b := max(1, min(e.block(), n))
	b0, b1 := partBlocks(part, parts, (n+b-1)/b)
	return b1 - b0
}

func partBlocks(part, parts, nb int) (b0, b1 int) {
	return part * nb / parts, (part + 1) * nb / parts
}

func (e *Engine) span(part, parts int) (span, error) {
	if parts < 1 || part < 0 || part >= parts {
		return span{}, fmt.Errorf("tile pass: part %d of %d", part, parts)
	}
	n := e.Source.N()
	b := max(1, min(e.block(), n))
	b0, b1 := partBlocks(part, parts, (n+b-1)/b)
	return span{b0: b0, b1: b1}, nil
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
	return e.mulOneHot(ctx, span{whole: true}, dst, s, k)
}

// MulOneHotPart is one part of MulOneHot, as MulPart is of Mul: it sets
// dst to the rows PartRows(part, parts) of P·S, with the same bits.
func (e *Engine) MulOneHotPart(ctx context.Context, part, parts int, dst []float64, s []int32, k int) error {
	sp, err := e.span(part, parts)
	if err != nil {
		return err
	}
	return e.mulOneHot(ctx, sp, dst, s, k)
}

func (e *Engine) mulOneHot(ctx context.Context, sp span, dst []float64, s []int32, k int) error {
	n := e.Source.N()
	if len(s) != n {
		return fmt.Errorf("tile pass P·S: %d column indices, want %d", len(s), n)
	}
	for i, c := range s {
		if c < 0 || int(c) >= k {
			return fmt.Errorf("tile pass P·S: row %d has column %d, want 0 <= c < %d", i, c, k)
		}
	}
	return e.run(ctx, "P·S", passInput{k: k, s: s}, sp, dst, nil, nil, func(p *partial, diag bool) {
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
