package spectral

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/internal/ordered"
	"github.com/ssnmf/ssnmf/store"
)

// DefaultCellRows is the rows of a cell, on average, of the coarse graph
// whose embedding starts the embedding of a graph (Options.CellRows).
const DefaultCellRows = 16

// denseRows is the most rows with an edge of a graph whose leading
// eigenvectors are taken from its dense normalised affinity: the coarsest
// level.
const denseRows = 384

// DefaultSweepDegree is the degree of the Chebyshev filter of a sweep
// (Options.Sweeps) when Options.Degree is 0.
const DefaultSweepDegree = 4

// levelSweeps is the sweeps that smooth the block prolonged from a coarse
// graph on each level below the top.
const levelSweeps = 2

// cells is a partition of the rows with an edge into connected cells of
// the graph, grown from seeded rows (grow).
type cells struct {
	of []int32 // n: the cell of each row, -1 for a row of degree 0
	m  int     // the number of cells
}

// strength is the least weight of an edge that is strong for its row, a
// share of the row's heaviest edge to another row: a cell grows along
// strong edges first, so that the few weak edges between two clusters do
// not join them into one cell.
const strength = 0.5

// grow partitions the rows of the graph into cells: m rows drawn with the
// seed are the first cells' seeds, and in rounds every row that has no
// cell takes the cell of its heaviest strong edge to a row that has one,
// so that a cell is connected and never spans two components of the
// graph. Rows that no strong edge reaches get seeds of their own (twice,
// m/8 at a time), then join by any edge; rows that nothing reaches (the
// components without a seed) share one last cell.
func grow(ctx context.Context, op *operator, m int, seed uint64, space *store.ScratchSpace) (*cells, error) {
	n := len(op.dinv)
	cur := make([]int32, n)
	for i := range cur {
		cur[i] = -1
	}
	least, err := leastStrong(ctx, op)
	if err != nil {
		return nil, err
	}
	c := &cells{of: cur}
	rng := rand.New(rand.NewPCG(seed, 0x636f61727365)) // "coarse"
	want := m
	for round := 0; ; round++ {
		var live []int32
		for i, d := range op.dinv {
			if d > 0 && cur[i] < 0 {
				live = append(live, int32(i))
			}
		}
		switch {
		case len(live) == 0:
			return c, nil
		case round == 3:
			if err := spread(ctx, op, cur, nil, space); err != nil {
				return nil, err
			}
			continue
		case round > 3:
			for _, i := range live {
				cur[i] = int32(c.m)
			}
			c.m++
			return c, nil
		}
		// Seeds: a sample of the rows without a cell, in row order.
		pick := rng.Perm(len(live))[:min(want, len(live))]
		slices.Sort(pick)
		for _, q := range pick {
			cur[live[q]] = int32(c.m)
			c.m++
		}
		if err := spread(ctx, op, cur, least, space); err != nil {
			return nil, err
		}
		want = max(1, m/8)
	}
}

// leastStrong returns for each row the least weight of a strong edge:
// strength times its heaviest edge to another row.
func leastStrong(ctx context.Context, op *operator) ([]float64, error) {
	g := op.g
	least := make([]float64, g.N())
	return least, ordered.Run(ctx, op.workers, chunks(len(least)), func() struct{} { return struct{}{} },
		func(_ context.Context, t int, _ struct{}) error {
			for i := t * chunkRows; i < min(len(least), (t+1)*chunkRows); i++ {
				lo := g.RowPtr[i]
				for e, j := range g.Col[lo:g.RowPtr[i+1]] {
					if int(j) != i {
						least[i] = max(least[i], strength*g.Val[lo+int64(e)])
					}
				}
			}
			return nil
		},
		func(int, struct{}) error { return nil })
}

// spread runs rounds in which each row without a cell takes the cell of
// its neighbour of the heaviest edge among those that had one in the round
// before (the least cell of equal weights), until no row changes; with
// least, only edges of at least least[i] count for row i. The rows without
// a cell and those edges are read from P once (frontier), into scratch
// memory of space, and the rounds go over them alone, dropping the rows
// that took a cell: a round over P itself read most of its pages however
// few rows were left (at 3·10⁶ rows in a 1 GiB cgroup, 1.5 GB a round, ten
// rounds).
func spread(ctx context.Context, op *operator, cur []int32, least []float64, space *store.ScratchSpace) (err error) {
	f, err := newFrontier(ctx, op, cur, least, space)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.sc.Release()) }()
	next := make([]int32, len(f.rows))
	for len(f.rows) > 0 {
		// Chunks of the frontier's rows and where their edges start.
		at := make([]int, 0, chunks(len(f.rows))+1)
		e := 0
		for r, c := range f.count {
			if r%chunkRows == 0 {
				at = append(at, e)
			}
			e += int(c)
		}
		err := ordered.Run(ctx, op.workers, len(at), func() struct{} { return struct{}{} },
			func(_ context.Context, t int, _ struct{}) error {
				e := at[t]
				for r := t * chunkRows; r < min(len(f.rows), (t+1)*chunkRows); r++ {
					best, heaviest := int32(-1), 0.0
					for x := e; x < e+int(f.count[r]); x++ {
						c, v := cur[f.col[x]], f.val[x]
						if c >= 0 && (best < 0 || v > heaviest || v == heaviest && c < best) {
							best, heaviest = c, v
						}
					}
					next[r] = best
					e += int(f.count[r])
				}
				return nil
			},
			func(int, struct{}) error { return nil })
		if err != nil {
			return err
		}
		if !f.settle(cur, next) {
			return nil
		}
	}
	return nil
}

// frontier is the rows without a cell, in increasing order, and the edges
// of each that may give it one: count[r] of them for rows[r], their
// columns and weights in col and val (scratch memory, sc), row after row.
type frontier struct {
	rows, count []int32
	col         []int32
	val         []float64
	sc          *store.Scratch
}

// newFrontier reads, in one pass over P, the rows without a cell and
// their edges to other rows (of weight at least least[i] for row i, if
// least is not nil); a row with none is left out, as no round can give it
// a cell.
func newFrontier(ctx context.Context, op *operator, cur []int32, least []float64, space *store.ScratchSpace) (*frontier, error) {
	g, n := op.g, len(cur)
	var most int64 // the entries of the rows without a cell
	for i, c := range cur {
		if c < 0 {
			most += g.RowPtr[i+1] - g.RowPtr[i]
		}
	}
	sc, err := space.New(int(most) * 12)
	if err != nil {
		return nil, fmt.Errorf("spectral: the edges of the rows without a cell: %w", err)
	}
	off := 0
	f := &frontier{val: store.Carve[float64](sc, &off, int(most)), col: store.Carve[int32](sc, &off, int(most)), sc: sc}
	type part struct {
		rows, count, col []int32
		val              []float64
	}
	e := 0
	err = ordered.Run(ctx, op.workers, chunks(n), func() *part { return &part{} },
		func(_ context.Context, t int, p *part) error {
			p.rows, p.count, p.col, p.val = p.rows[:0], p.count[:0], p.col[:0], p.val[:0]
			for i := t * chunkRows; i < min(n, (t+1)*chunkRows); i++ {
				if cur[i] >= 0 {
					continue
				}
				lo, before := g.RowPtr[i], len(p.col)
				for x, j := range g.Col[lo:g.RowPtr[i+1]] {
					if v := g.Val[lo+int64(x)]; int(j) != i && (least == nil || v >= least[i]) {
						p.col, p.val = append(p.col, j), append(p.val, v)
					}
				}
				if c := len(p.col) - before; c > 0 {
					p.rows, p.count = append(p.rows, int32(i)), append(p.count, int32(c))
				}
			}
			return nil
		},
		func(_ int, p *part) error {
			f.rows, f.count = append(f.rows, p.rows...), append(f.count, p.count...)
			copy(f.val[e:], p.val)
			e += copy(f.col[e:], p.col)
			return nil
		})
	if err != nil {
		return nil, errors.Join(err, sc.Release())
	}
	f.col, f.val = f.col[:e], f.val[:e]
	return f, nil
}

// settle gives each row its cell of the round, next[r] for rows[r] if it
// is one, and keeps the rows still without one and their edges, moved
// down in place; it reports whether any row took a cell.
func (f *frontier) settle(cur, next []int32) bool {
	kept, e, to := 0, 0, 0
	for r, i := range f.rows {
		c := int(f.count[r])
		if next[r] >= 0 {
			cur[i] = next[r]
		} else {
			copy(f.col[to:to+c], f.col[e:e+c])
			copy(f.val[to:to+c], f.val[e:e+c])
			f.rows[kept], f.count[kept] = i, f.count[r]
			kept, to = kept+1, to+c
		}
		e += c
	}
	changed := kept < len(f.rows)
	f.rows, f.count, f.col, f.val = f.rows[:kept], f.count[:kept], f.col[:to], f.val[:to]
	return changed
}

// fromCoarse sets the leading columns of the block x (n×b) to an
// approximation of the leading eigenvectors of A: those of the dense A
// when the graph has at most denseRows rows with an edge, else those of
// the coarse graph of its cells (found the same way, a level down, and
// smoothed there by levelSweeps sweeps), prolonged to the rows: on row i
// of cell c, the coarse vector's entry at c times √(d_i / vol c). The
// other columns are left as they are.
func (s *solver) fromCoarse(ctx context.Context, level int, seed uint64, cellRows int) (err error) {
	live := 0
	for _, d := range s.op.dinv {
		if d > 0 {
			live++
		}
	}
	if live <= s.denseRows {
		return s.dense(ctx)
	}
	c, err := grow(ctx, s.op, max(1, live/cellRows), seed^uint64(level), s.space)
	if err != nil || c.m > live/2 {
		return err // no coarser graph: the random start
	}
	// A worker gathers the rows of its cells in the order of the file,
	// but they are not all of its rows: a fault should read its page, not
	// the pages around it, which the next gather may want again only
	// after they were reclaimed, and the rows of a chunk of cells are
	// asked for before they are gathered. The advice is only that; it
	// changes no value.
	s.adviseRandom(true)
	pc, sc, err := coarseGraph(ctx, s.op, c, s.space, s.mapped)
	s.adviseRandom(false)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sc.Release()) }()
	op, cdeg, _, err := newOperator(ctx, pc, s.workers)
	if err != nil {
		return err
	}
	cs := &solver{op: op, deg: cdeg, n: c.m, b: min(s.b, c.m), tol: s.tol, workers: s.workers, f: filter{degree: s.f.degree}, denseRows: s.denseRows,
		space: s.space}
	if sc.Where() == "file" {
		cs.mapped, cs.gmem = true, sc.Mem
	}
	defer func() { err = errors.Join(err, cs.release()) }()
	cs.nv = min(s.nv, cs.b)
	if err := cs.start(ctx, seed, level+1, cellRows); err != nil {
		return err
	}
	if _, err := cs.sweeps(ctx, levelSweeps); err != nil {
		return err
	}
	s.levels = cs.levels + 1
	n, b, w := s.n, s.b, cs.b
	if w == b {
		s.least = cs.theta[0]
	}
	return ordered.Run(ctx, s.workers, chunks(n), func() struct{} { return struct{}{} },
		func(_ context.Context, t int, _ struct{}) error {
			for i := t * chunkRows; i < min(n, (t+1)*chunkRows); i++ {
				a := c.of[i]
				if a < 0 {
					continue
				}
				f := math.Sqrt(s.deg[i] / cdeg[a])
				for j, v := range cs.x[int(a)*w : (int(a)+1)*w] {
					s.x[i*b+j] = f * v
				}
			}
			return nil
		},
		func(int, struct{}) error { return nil })
}

// dense sets the leading columns of the block to the leading
// eigenvectors of the dense A, of a graph of few rows.
func (s *solver) dense(ctx context.Context) error {
	n, b, g := s.n, s.b, s.op.g
	a := make([]float64, n*n)
	for i := range n {
		lo := g.RowPtr[i]
		for e, j := range g.Col[lo:g.RowPtr[i+1]] {
			a[i*n+int(j)] += s.op.dinv[i] * g.Val[lo+int64(e)] * s.op.dinv[j]
		}
	}
	vals, vecs, err := eigenSym(a, n)
	if err != nil {
		return err
	}
	if n >= b {
		s.least = vals[n-b]
	}
	for i := range n {
		for j := range min(b, n) {
			s.x[i*b+j] = vecs[i*n+n-1-j]
		}
	}
	return ctx.Err()
}

// coarseGraph returns the coarse graph of the cells: its entry (a, q) is
// the sum of P_ij over the rows i of cell a and j of cell q, added row by
// row in the order of the rows, so the same bits for any workers. Its
// entries are in scratch memory from space, returned to be released when
// the graph is no longer used.
func coarseGraph(ctx context.Context, op *operator, c *cells, space *store.ScratchSpace, mapped bool) (*graph.CSR, *store.Scratch, error) {
	g, m := op.g, c.m
	// The rows of each cell, in row order: a counting sort.
	first := make([]int, m+1)
	for _, a := range c.of {
		if a >= 0 {
			first[a+1]++
		}
	}
	for a := range m {
		first[a+1] += first[a]
	}
	members, at := make([]int32, first[m]), slices.Clone(first[:m])
	for i, a := range c.of {
		if a >= 0 {
			members[at[a]] = int32(i)
			at[a]++
		}
	}
	// Each chunk of cells writes its entries into a region of the arrays
	// as long as its members' entries of P, at most; the regions are then
	// closed up, in chunk order.
	region := make([]int64, chunks(m)+1)
	for t := range chunks(m) {
		e := region[t]
		for _, i := range members[first[t*chunkRows]:first[min(m, (t+1)*chunkRows)]] {
			e += g.RowPtr[i+1] - g.RowPtr[i]
		}
		region[t+1] = e
	}
	total := int(region[chunks(m)])
	sc, err := space.New(total*8 + (total*4+7)&^7)
	if err != nil {
		return nil, nil, fmt.Errorf("spectral: the coarse graph's entries: %w", err)
	}
	off := 0
	val := store.Carve[float64](sc, &off, total)
	col := store.Carve[int32](sc, &off, total)
	fail := func(err error) (*graph.CSR, *store.Scratch, error) {
		return nil, nil, errors.Join(err, sc.Release())
	}
	rowPtr := make([]int64, 1, m+1)
	err = ordered.Run(ctx, op.workers, chunks(m),
		func() *cellChunk { return &cellChunk{acc: make([]float64, m), set: newCellSet(m)} },
		func(_ context.Context, t int, p *cellChunk) error {
			p.rows = p.rows[:0]
			if mapped {
				p.fetch(g, members[first[t*chunkRows]:first[min(m, (t+1)*chunkRows)]])
			}
			at := region[t]
			for a0, end := t*chunkRows, min(m, (t+1)*chunkRows); a0 < end; {
				a1 := a0 + p.gather(g, c.of, members, first[a0:end+1])
				for a := range a1 - a0 {
					for k := p.at[a]; k < p.to[a]; k++ {
						q := p.q[k]
						p.set.add(q)
						p.acc[q] += p.v[k]
					}
					before := at
					p.set.drain(func(q int32) {
						col[at], val[at] = q, p.acc[q]
						p.acc[q] = 0
						at++
					})
					p.rows = append(p.rows, at-before)
				}
				a0 = a1
			}
			return nil
		},
		func(_ int, p *cellChunk) error {
			for _, r := range p.rows {
				rowPtr = append(rowPtr, rowPtr[len(rowPtr)-1]+r)
			}
			return nil
		})
	if err != nil {
		return fail(err)
	}
	// A chunk's entries move down to their place, which is at or before
	// their region's start and ends before the next region's.
	for t := range chunks(m) {
		to, from := rowPtr[t*chunkRows], region[t]
		cnt := rowPtr[min(m, (t+1)*chunkRows)] - to
		copy(col[to:to+cnt], col[from:from+cnt])
		copy(val[to:to+cnt], val[from:from+cnt])
	}
	col, val = col[:rowPtr[m]], val[:rowPtr[m]]
	// The sums of (a, q) and (q, a) add the same values in other orders:
	// the entries below the diagonal take those above it, so that the
	// coarse graph is symmetric to the bit.
	var aside *store.ScratchSpace
	if sc.Where() == "file" {
		aside = space
	}
	if err := mirrorUpper(rowPtr, col, val, aside, 0); err != nil {
		return fail(err)
	}
	pc, err := graph.NewCSR(rowPtr, col, val)
	if err != nil {
		return fail(fmt.Errorf("spectral: the coarse graph: %w", err))
	}
	pc.Scale, pc.Workers, pc.Kernel = 1, op.workers, op.g.Kernel
	return pc, sc, nil
}

// cellChunk is a worker's state in coarseGraph: a chunk of cells' entries
// of P, set out by cell, and the sums of one cell's row.
type cellChunk struct {
	acc    []float64
	set    cellSet
	rows   []int64   // entries of each cell of the chunk
	order  []int64   // the chunk's member rows, row<<32 | cell in the chunk, by row
	at, to []int     // each cell's first entry in q and v, and the next to fill
	q      []int32   // the cells of the gathered entries' columns
	v      []float64 // the gathered entries' values
	sorted []int32   // the chunk's member rows in order, to ask for (fetch)
}

// fetch asks for the pages of P's entries in the rows of a chunk's
// cells, members, before they are gathered (graph.CSR.FetchRows): out of
// core, where P's file is advised as read at random, they would otherwise
// come in a fault at a time.
func (p *cellChunk) fetch(g *graph.CSR, members []int32) {
	p.sorted = append(p.sorted[:0], members...)
	slices.Sort(p.sorted)
	g.FetchRows(p.sorted)
}

// gatherEntries is the most entries of P a worker of coarseGraph holds
// at once (12 bytes each), unless a cell alone has more.
const gatherEntries = 1 << 16

// gather reads the entries of P in the rows of the first cells of a
// chunk, their members members[first[0]:first[1]], members[first[1]:first[2]],
// and so on, as many cells as gatherEntries allows, at least one, and
// returns the number taken. It reads the rows in their order, which is the
// order of P's file, and sets out the entries whose column has a cell by
// cell: cell a's are q[at[a]:to[a]] (their columns' cells) and v, in the
// order of its rows and then of their columns, the order in which the
// cell's sums add them. Read cell by cell, the rows came from anywhere in
// the chunk's span of the file: at 3·10⁶ rows in a 1 GiB cgroup, P's 1.7
// GB were read 3.5 times over, a page at a time, in 103 s.
func (p *cellChunk) gather(g *graph.CSR, of, members []int32, first []int) int {
	p.order, p.at, p.to = p.order[:0], p.at[:0], p.to[:0]
	k, cells := 0, 0
	for a := range len(first) - 1 {
		e := 0
		for _, i := range members[first[a]:first[a+1]] {
			e += int(g.RowPtr[i+1] - g.RowPtr[i])
		}
		if a > 0 && k+e > gatherEntries {
			break
		}
		p.at, p.to = append(p.at, k), append(p.to, k)
		for _, i := range members[first[a]:first[a+1]] {
			p.order = append(p.order, int64(i)<<32|int64(a))
		}
		k += e
		cells++
	}
	slices.Sort(p.order)
	p.q, p.v = slices.Grow(p.q[:0], k)[:k], slices.Grow(p.v[:0], k)[:k]
	for _, o := range p.order {
		i, a := int(o>>32), int(o&(1<<32-1))
		lo, e := g.RowPtr[i], p.to[a]
		for x, j := range g.Col[lo:g.RowPtr[i+1]] {
			if q := of[j]; q >= 0 {
				p.q[e], p.v[e] = q, g.Val[lo+int64(x)]
				e++
			}
		}
		p.to[a] = e
	}
	return cells
}

// checked takes the Rayleigh-Ritz step of A and checks its residuals
// unless the block has been checked; the residuals' block is its scratch.
func (s *solver) checked(ctx context.Context) error {
	if s.res != nil {
		return nil
	}
	if err := s.restart(ctx, s.r); err != nil {
		return err
	}
	return s.check(ctx)
}

// sweeps smooths the block by products with the Chebyshev filter of the
// block's least Ritz value (s.least, or found by a Rayleigh-Ritz step),
// each followed by the Rayleigh-Ritz step of A and the check of its
// residuals; it returns the sweeps taken. A sweep whose filtered block
// loses rank is not taken (the block stays).
func (s *solver) sweeps(ctx context.Context, sweeps int) (int, error) {
	n, b := s.n, s.b
	least := s.least
	if least == 0 {
		if err := s.checked(ctx); err != nil {
			return 0, err
		}
		least = s.theta[0]
	}
	for it := range sweeps {
		e := edgeFor(least)
		if s.f.degree >= 2 && e > 0 {
			s.f.on, s.f.edge = true, e
		}
		if err := s.applyB(ctx, s.r, s.x, s.ax, b); err != nil { // A·X is made again below
			return it, err
		}
		g, err := gram(ctx, s.workers, n, s.r, b, s.r, b)
		if err != nil {
			return it, err
		}
		t, w, err := orthonormalize(g, b)
		if err != nil {
			return it, err
		}
		if w < b {
			return it, s.checked(ctx)
		}
		if err := combine(ctx, s.workers, n, s.x, b, term{m: s.r, w: b, c: t}); err != nil {
			return it, err
		}
		s.f.on = false
		if err := s.restart(ctx, s.r); err != nil {
			return it, err
		}
		if err := s.check(ctx); err != nil {
			return it, err
		}
		least = s.theta[0]
		if s.progress != nil {
			s.progress(it+1, s.op.passes, slices.Max(s.res[:s.nv]))
		}
	}
	return sweeps, nil
}

// components returns the number of connected components of the graph's
// rows with an edge, by union-find over its entries.
func components(ctx context.Context, g *graph.CSR) (int, error) {
	n := g.N()
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(i int32) int32 {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i := range n {
		if i%(1<<16) == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		for _, j := range g.Col[g.RowPtr[i]:g.RowPtr[i+1]] {
			a, b := find(int32(i)), find(j)
			if a < b {
				parent[b] = a
			} else if b < a {
				parent[a] = b
			}
		}
	}
	c := 0
	for i := range n {
		if g.RowPtr[i+1] > g.RowPtr[i] && parent[i] == int32(i) {
			c++
		}
	}
	return c, nil
}

// mirrorUpper sets every entry (a, q) below the diagonal of the CSR
// matrix to the entry (q, a) above it, in one pass over the rows: row a's
// entries below the diagonal are those of the rows q < a that have a
// column a, in increasing q, so a cursor a row finds each in turn. It
// fails if the matrix is not symmetric in its pattern.
//
// With space, for a matrix in a file larger than memory, the entries
// above the diagonal are set aside by groups of window rows they go to
// (mirrorWindow if 0; store.Aside) and handed back group by group, in
// the order of q still: most go to rows near q, but the rest, anywhere,
// would each bring in and dirty a page of the file (at 3·10⁶ rows in 640
// MiB, the first coarse graph's 720 MB were read 12 times over). The
// values are the same.
func mirrorUpper(rowPtr []int64, col []int32, val []float64, space *store.ScratchSpace, window int) error {
	m := len(rowPtr) - 1
	next := slices.Clone(rowPtr[:m]) // by row: its next entry below the diagonal
	set := func(x mirrorEntry) error {
		at := next[x.a]
		if at >= rowPtr[x.a+1] || col[at] != x.q {
			return fmt.Errorf("spectral: the coarse graph has an entry (%d, %d) but not (%d, %d)", x.q, x.a, x.a, x.q)
		}
		val[at] = x.v
		next[x.a]++
		return nil
	}
	var aside *store.Aside[mirrorEntry]
	if space != nil && m > 0 {
		aside = store.NewAside[mirrorEntry](space, "the coarse graph's entries", cmp.Or(window, mirrorWindow(rowPtr)), m)
		defer aside.Close()
	}
	for q := range m {
		lo, hi := rowPtr[q], rowPtr[q+1]
		e, _ := slices.BinarySearch(col[lo:hi], int32(q)+1)
		for e := lo + int64(e); e < hi; e++ {
			x := mirrorEntry{a: col[e], q: int32(q), v: val[e]}
			if aside != nil {
				if err := aside.Put(x); err != nil {
					return fmt.Errorf("spectral: %w", err)
				}
			} else if err := set(x); err != nil {
				return err
			}
		}
	}
	if aside != nil {
		_, err := aside.Take(func(p []mirrorEntry) error {
			for _, x := range p {
				if err := set(x); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for a := range m {
		if next[a] < rowPtr[a+1] && col[next[a]] < int32(a) {
			return fmt.Errorf("spectral: the coarse graph has an entry (%d, %d) but not (%d, %d)", a, col[next[a]], col[next[a]], a)
		}
	}
	return nil
}

// mirrorEntry is an entry (q, a) above the diagonal, to set (a, q) to.
type mirrorEntry struct {
	a, q int32
	v    float64
}

// Target returns the row the entry goes to (store.Targeted).
func (x mirrorEntry) Target() int32 { return x.a }

// mirrorBytes is the bytes of a coarse graph's entries (12 each) in the
// rows of a group of mirrorUpper in a file, on average.
const mirrorBytes = 64 << 20

// mirrorWindow returns the rows of a group of mirrorUpper: as many as hold
// mirrorBytes of entries on average, and at least a 256th of the rows (a
// file a group).
func mirrorWindow(rowPtr []int64) int {
	m := len(rowPtr) - 1
	nnz := max(1, rowPtr[m])
	return max(1, (m+255)/256, int(int64(m)*(mirrorBytes/12)/nnz))
}

// cellSet is a set of cells that yields them in increasing order in time
// proportional to their number plus a 4096th of the cells: a bit a cell,
// and a bit for each word of those that is not zero.
type cellSet struct {
	bits, words []uint64
}

func newCellSet(m int) cellSet {
	w := (m + 63) / 64
	return cellSet{bits: make([]uint64, w), words: make([]uint64, (w+63)/64)}
}

// add adds cell q.
func (s *cellSet) add(q int32) {
	w := q >> 6
	s.bits[w] |= 1 << (q & 63)
	s.words[w>>6] |= 1 << (w & 63)
}

// drain calls f for each cell of the set, in increasing order, and
// empties it.
func (s *cellSet) drain(f func(q int32)) {
	for x, top := range s.words {
		for ; top != 0; top &= top - 1 {
			w := x*64 + bits.TrailingZeros64(top)
			for word := s.bits[w]; word != 0; word &= word - 1 {
				f(int32(w*64 + bits.TrailingZeros64(word)))
			}
			s.bits[w] = 0
		}
		s.words[x] = 0
	}
}
