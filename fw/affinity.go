package fw

import "context"

// Affinity is the matrix P of a problem: an n×n matrix that every method
// reads only through the products and the row access below.
//
// The contract:
//   - P is symmetric, nonnegative and finite; the methods rely on it
//     (the objective, the gap and the row updates use P = Pᵀ) and do not
//     check it.
//   - Every matrix is row-major []float64 with k columns, owned by the
//     caller. A method writes only dst and rowSums, reads w and s, and
//     keeps none of them after it returns.
//   - Sums are reduced in an order that does not depend on the number of
//     goroutines, so the same call gives the same bits.
//   - A method may be called by one goroutine at a time.
//
// tile.Engine (with Tiled), Dense and a sparse matrix (neighbour lists)
// all implement it.
type Affinity interface {
	// N returns the order of P.
	N() int
	// Mul sets dst = P·W. If rowSums is not nil it also writes the row
	// sums of P into it and returns ||P||_F^2.
	Mul(ctx context.Context, dst, w []float64, k int, rowSums []float64) (frobSq float64, err error)
	// MulOneHot sets dst = P·S for the one-hot S with S[i][s[i]] = 1.
	MulOneHot(ctx context.Context, dst []float64, s []int32, k int) error
	// Sweep returns the row access of a row-wise method for an n×k W.
	Sweep(k int, opt SweepOptions) (Sweep, error)
}

// SweepOptions shape the blocks of rows of a Sweep. An affinity without
// tiles (a sparse matrix) may ignore them.
type SweepOptions struct {
	// BlockSize is the most rows of a block; DefaultBlockRows if 0.
	BlockSize int
	// Memory bounds the bytes of the strip of a block (8 × BlockSize × n
	// for the first), 0 meaning no bound. If a strip does not fit, a block
	// gets fewer rows, as many as fit; if fewer than MinStripRows fit, every
	// sweep reads the strip twice (see Sweep.Passes).
	Memory int64
	// Workers is the number of goroutines of the pulls and pushes; 1 if 0.
	Workers int
	// Window, if above 0, asks a sweep of a sparse P to keep P·W current
	// only in blocks of Window rows, one at a time, for a P·W in a file
	// larger than memory: the block's rows of P·W are copied into
	// anonymous memory (8·k·Window bytes) while they are visited,
	// Block.Spread sets the changes of the rows of other blocks aside, in
	// unlinked files of Dir, and the sweep adds them when it reaches their
	// block, or at its end, in the order they were made, so that the bits
	// are those of one block. A sweep visits the rows of such blocks in
	// order.
	Window int
	// Dir is the directory of the files of Window.
	Dir string

	// products chooses how a tile strip applies the changes of W to P·W,
	// for tests; the zero value chooses by build and k.
	products stripProducts
}

// Sweep is the access to P of a method that visits the rows of W in
// order, updating P·W as it goes (RowCD). The rows are visited in blocks
// of consecutive rows, in order. For each block the method calls Pull,
// visits the block's rows through the Block it returns, and calls Push.
//
// The changes of W are kept in a Pending: the change of every row at its
// last visit. When a block's rows are visited, their rows of P·W must be
// current. Pull makes them so by adding the pending changes of the rows
// after the block, P[r0:r1, r1:n]·D[r1:n]; Block.Spread keeps the rows
// that the block covers current after every visit; and Push passes the
// block's changes on to the rows after it, P[r1:n, r0:r1]·D[r0:r1]. The
// changes of a block reach the rows before it at their pull in the next
// sweep. An affinity whose Spread reaches every row that a change affects
// (neighbour lists) has one block and a Pull and Push that add nothing.
//
// A Sweep gives the same bits for any number of workers.
type Sweep interface {
	// Blocks returns the bounds of the blocks: block b is the rows
	// [bounds[b], bounds[b+1]), bounds[0] = 0 and the last is n.
	Blocks() []int
	// Passes returns the number of passes over P that a sweep costs.
	Passes() int
	// Pull adds P[r0:r1, r1:n]·D[r1:n] to the rows r0:r1 of pw and
	// returns the access to the block of rows r0:r1, valid until the next
	// Pull.
	Pull(ctx context.Context, r0, r1 int, pw []float64, d *Pending) (Block, error)
	// Push adds P[r1:n, r0:r1]·D[r0:r1] to the rows r1:n of pw.
	Push(ctx context.Context, r0, r1 int, pw []float64, d *Pending) error
	// Defers reports whether Pull and Push pass changes on from the
	// Pending. If not (a sweep of one block, or of a sparse P whose
	// Spread passes every change on, or sets it aside, itself), they never
	// read it, and RowCD keeps none: at n = 10⁷ rows it would take 730 MB.
	Defers() bool
}

// Block is the access to P while a sweep visits the rows of one block.
type Block interface {
	// Diag returns P_ii for a row i of the block.
	Diag(i int) float64
	// Spread adds P_li·d to row l of pw for the rows l that the block
	// keeps current (the block's rows for a strip of tiles, every
	// neighbour of i for a sparse matrix), i itself included, where d is
	// the change of row i of W, with values vals in the columns cols.
	Spread(pw []float64, k, i int, cols []int32, vals []float64)
}

// settler is a Block that may hold changes of P·W back for rows outside
// its block (a sparse P with SweepOptions.Window): Settle adds them all to
// pw, so that every row of P·W is current and a sweep may stop after any
// visit. RowCD settles a sweep that it stops part way; the Push of the
// last block settles a sweep that ends.
type settler interface {
	Settle(pw []float64) error
}

// holder is a Block that holds its block's rows of P·W in memory of its
// own while they are visited (a sparse P with SweepOptions.Window, whose
// P·W is in a file larger than memory): Rows returns them, the rows r0
// on, which the visits read and Spread changes in place of pw's, and
// which the block's Push, or Settle, puts back in pw.
type holder interface {
	Rows() (pw []float64, r0 int)
}

// TiledMatrix is a matrix that offers the passes of an Affinity and any
// of its tiles, as tile.Engine does.
type TiledMatrix interface {
	TileSource
	Mul(ctx context.Context, dst, w []float64, k int, rowSums []float64) (frobSq float64, err error)
	MulOneHot(ctx context.Context, dst []float64, s []int32, k int) error
}

// TileSource produces blocks of a symmetric, nonnegative n×n matrix P by
// value. Every tile.Source satisfies it.
type TileSource interface {
	// N returns the order of P.
	N() int
	// Tile writes P[r0:r1, c0:c1] into dst, row-major with stride c1-c0.
	Tile(dst []float64, r0, r1, c0, c1 int) error
}

// Tiled returns the Affinity of m: its passes, and sweeps over strips of
// its tiles (see Sweep).
func Tiled(m TiledMatrix) Affinity { return tiled{m} }

type tiled struct{ TiledMatrix }

func (t tiled) Sweep(k int, opt SweepOptions) (Sweep, error) {
	return newStrips(t.TiledMatrix, k, opt)
}
