// Package spectral holds the spectral embedding of a sparse affinity
// graph: the leading eigenvectors of its normalised affinity
// A = D^-½ P D^-½ (D the diagonal of P's row sums), found by LOBPCG
// (Knyazev 2001) whose products are passes over the graph, and the
// clustering made from them (Ng, Jordan and Weiss 2001): the rows of the
// embedding normalised to unit length and clustered by k-means
// (package kmeans), whose soft memberships are a start of the solver or
// the clustering itself (ssnmf solve -init spectral, -method spectral).
//
// LOBPCG iterates on a Chebyshev polynomial of A of degree 10 once a
// Ritz value bounds the part of the spectrum to damp (see filter): its
// leading eigenvectors are A's, and LOBPCG then needs several times fewer
// iterations, whose block work costs far more than a product.
//
// A start of the solver needs the leading subspace only to the accuracy
// that separates its clusters. With Options.Sweeps the embedding is
// approximate and costs a few passes: the graph's rows are grouped into
// connected cells of about 16 rows grown along its strong edges, the
// cells make a coarse graph (the sums of P between them) whose own
// embedding is found the same way, level by level, down to a graph of a
// few hundred rows solved dense; each level's block, prolonged to the
// rows of the level above, is smoothed by a Chebyshev filter of degree 4
// and a Rayleigh-Ritz step (a sweep). Its residuals are reported, not
// reached.
//
// Every product is one pass over the CSR graph (graph.CSR.Mul) on its
// workers, and every block inner product is summed in fixed chunks of
// rows, in chunk order, so that the embedding has the same bits for any
// number of workers. The block vectors are 9 blocks of n×b float64
// values (b the block's width, K+1 plus a guard of 4), 72·n·b bytes: 1.1
// GB at n = 10⁶ and K = 10; with Sweeps 5 blocks, and the coarse graphs
// (the first of them held 43% of P's entries on 10⁶ rows of ssnmf gen, 12
// bytes each). They are scratch memory of Options.Scratch (anonymous
// memory, then files; see store.Scratch), the heap if it is nil; the heap
// holds O(n) words beside them (Bytes).
package spectral

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/internal/fault"
	"github.com/ssnmf/ssnmf/internal/ordered"
	"github.com/ssnmf/ssnmf/store"
)

// Defaults of Options.
const (
	// DefaultTol is the residual norm ||A x - λ x|| of a unit eigenvector
	// (relative to ||A|| = 1) at which the embedding stops.
	DefaultTol = 1e-6
	// DefaultMaxIter is the most LOBPCG iterations, each one product.
	DefaultMaxIter = 2000
	// DefaultGuard is the block's columns beyond the K+1 reported, which
	// speed the convergence of the last of them.
	DefaultGuard = 4
)

// Options control Embed. K is required; the zero value of the others
// takes their defaults.
type Options struct {
	K       int     // the eigenvectors of the embedding, 1 to n
	Degree  int     // the degree of the Chebyshev filter (see filter); 0: DefaultDegree; 1: LOBPCG on A itself
	Block   int     // the block's width, at least K+1 (at most n); 0: K+1+DefaultGuard
	Tol     float64 // the relative residual norm of convergence; 0: DefaultTol
	MaxIter int     // the most iterations; 0: DefaultMaxIter
	Seed    uint64  // the seed of the starting block's random columns and of the cells' seeds
	// CellRows is the rows of a cell, on average, of the coarse graph
	// whose embedding, prolonged, is the start (the coarse graph's own is
	// found the same way, down to a graph of a few hundred rows); < 0: the
	// start is D^½·1 and random columns. 0: DefaultCellRows with Sweeps,
	// else the random start: LOBPCG on the filter from the coarse start
	// lost the leading eigenvector on one graph of the study (letter, see
	// docs/spectral.md), so the embedding to a tolerance keeps the start
	// the study validated.
	CellRows int
	Workers  int // goroutines of the passes; 0: 1. Any number gives the same bits.
	// Scratch is where the block vectors and the coarse graphs' entries
	// go: anonymous memory up to its budget, then files
	// (store.ScratchSpace); nil: the heap. Where they are changes no bit
	// of the embedding.
	Scratch *store.ScratchSpace
	// Sweeps, if > 0, makes the embedding approximate: the coarse start
	// (Cells) smoothed by Sweeps products with the Chebyshev filter of
	// degree Degree, each followed by a Rayleigh-Ritz step of A, with no
	// LOBPCG iteration and no tolerance to reach; the residuals report
	// how near the eigenvectors it is. A start needs the leading subspace
	// to the accuracy that separates its clusters, not residuals of 10⁻⁶.
	Sweeps int
	// denseRows is the most rows of the coarsest graph, whose leading
	// eigenvectors are dense ones (tests); 0: the package's denseRows.
	denseRows int
	// Progress, if not nil, is called after each iteration's check with
	// the iterations and products so far and the largest of the K+1
	// leading residuals.
	Progress func(iterations, passes int, residual float64)
}

// Embedding is the spectral embedding of a graph and the report of its
// computation.
type Embedding struct {
	N, K int
	// Vectors is n×K, row-major: column j is the unit eigenvector of the
	// j-th largest eigenvalue of D^-½ P D^-½ (column 0 is D^½·1
	// normalised when the graph is connected).
	Vectors []float64
	// Values are the K+1 largest eigenvalues (K if n = K), descending; the
	// gap after the K-th is what separates K clusters.
	Values []float64
	// Residuals are ||A x_j - λ_j x_j|| of the Values' eigenvectors: since
	// ||x_j|| = 1 and ||A|| = 1, the relative residuals.
	Residuals  []float64
	Block      int  // the block's width
	Iterations int  // LOBPCG iterations, or the sweeps taken (Options.Sweeps)
	Passes     int  // products with P, the degree pass included (not those with the coarse graphs)
	Levels     int  // coarse graphs below P whose embeddings, prolonged, made the start
	Converged  bool // every residual is at most the tolerance
	Isolated   int  // rows of degree 0: their rows of A, and of the embedding, are 0
	// Components are the connected components of the rows with an edge:
	// the multiplicity of the eigenvalue 1, which Eigengap counts.
	Components int
}

// operator is A = D^-½ P D^-½ as products of P.
type operator struct {
	g       *graph.CSR // P with Scale 1: A does not depend on P's scale
	dinv    []float64  // D^-½, 0 for a row of degree 0
	workers int
	passes  int
}

// apply sets dst = A·src for the n×w blocks dst and src, using tmp (n×w)
// for D^-½·src.
func (op *operator) apply(ctx context.Context, dst, src, tmp []float64, w int) error {
	n := len(op.dinv)
	tmp = tmp[:n*w]
	if err := scaleRows(ctx, op.workers, tmp, src, w, op.dinv); err != nil {
		return err
	}
	if _, err := op.g.Mul(ctx, dst[:n*w], tmp, w, nil); err != nil {
		return err
	}
	op.passes++
	return scaleRows(ctx, op.workers, dst[:n*w], dst[:n*w], w, op.dinv)
}

// scaleRows sets row i of dst (n×w) to s_i times row i of src.
func scaleRows(ctx context.Context, workers int, dst, src []float64, w int, s []float64) error {
	n := len(s)
	return ordered.Run(ctx, workers, chunks(n), func() struct{} { return struct{}{} },
		func(_ context.Context, t int, _ struct{}) error {
			for i := t * chunkRows; i < min(n, (t+1)*chunkRows); i++ {
				for c := i * w; c < (i+1)*w; c++ {
					dst[c] = s[i] * src[c]
				}
			}
			return nil
		},
		func(int, struct{}) error { return nil })
}

// newOperator returns the normalised affinity of g by a pass for its
// degrees, and the rows of degree 0.
func newOperator(ctx context.Context, g *graph.CSR, workers int) (*operator, []float64, int, error) {
	p := *g // the same arrays, another scale and workers
	p.Scale, p.Workers = 1, workers
	n := p.N()
	ones, y, deg := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	if _, err := p.Mul(ctx, y, ones, 1, deg); err != nil {
		return nil, nil, 0, err
	}
	op := &operator{g: &p, dinv: make([]float64, n), workers: workers, passes: 1}
	isolated := 0
	for i, d := range deg {
		if d > 0 {
			op.dinv[i] = 1 / math.Sqrt(d)
		} else {
			isolated++
		}
	}
	if isolated == n {
		return nil, nil, 0, errors.New("spectral: every row of the graph has degree 0: nothing to embed")
	}
	return op, deg, isolated, nil
}

// Embed returns the spectral embedding of the graph g: the K leading
// eigenvectors of D^-½ P D^-½ and the K+1 leading eigenvalues. Its start
// is the embedding of the graph's coarse graph, prolonged (see
// fromCoarse), or the known eigenvector D^½·1 and seeded random columns
// (Options.CellRows). Then either LOBPCG with soft locking, each iteration one
// product with P of the block's unconverged columns, until the K+1
// leading residuals are at most opt.Tol or after opt.MaxIter iterations
// (Converged false); or, with opt.Sweeps, that many sweeps of the filter
// (an approximate embedding, for a start). It fails on bad options or a
// canceled ctx.
func Embed(ctx context.Context, g *graph.CSR, opt Options) (_ *Embedding, err error) {
	s, isolated, err := newSolver(ctx, g, opt)
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := s.release(); err == nil {
			err = rerr
		}
	}()
	// The components, a pass on one goroutine, are counted beside the
	// embedding's passes on the workers.
	var comps int
	var compErr error
	counted := make(chan struct{})
	go func() {
		defer close(counted)
		compErr = fault.Guard(func() (err error) {
			comps, err = components(ctx, g)
			return err
		})()
	}()
	defer func() { <-counted }()
	cellRows := opt.CellRows
	if cellRows == 0 {
		cellRows = -1
		if opt.Sweeps > 0 {
			cellRows = DefaultCellRows
		}
	}
	if err := s.start(ctx, opt.Seed, 0, cellRows); err != nil {
		return nil, err
	}
	var it int
	if opt.Sweeps > 0 {
		it, err = s.sweeps(ctx, opt.Sweeps)
	} else if err = s.restart(ctx, nil); err == nil { // the filter is off
		it, err = s.iterate(ctx, cmpOr(opt.MaxIter, DefaultMaxIter))
	}
	if err != nil {
		return nil, err
	}
	if <-counted; compErr != nil {
		return nil, compErr
	}
	n, nv := s.n, s.nv
	e := &Embedding{N: n, K: opt.K, Block: s.b, Iterations: it, Passes: s.op.passes, Levels: s.levels, Isolated: isolated, Components: comps,
		Values: slices.Clone(s.rho[:nv]), Residuals: slices.Clone(s.res[:nv]), Converged: s.converged()}
	e.Vectors = make([]float64, n*opt.K)
	return e, combine(ctx, s.workers, n, e.Vectors, opt.K, term{m: s.x, w: s.b, cols: first(opt.K)})
}

// newSolver checks the options and returns the solver of g's embedding
// with its operator, and the rows of degree 0.
func newSolver(ctx context.Context, g *graph.CSR, opt Options) (*solver, int, error) {
	n := g.N()
	if opt.K < 1 || opt.K > n {
		return nil, 0, fmt.Errorf("spectral: %d eigenvectors of a graph of %d rows, want 1 to %d", opt.K, n, n)
	}
	nv := min(opt.K+1, n)
	b := min(cmpOr(opt.Block, nv+DefaultGuard), n)
	if b < nv {
		return nil, 0, fmt.Errorf("spectral: a block of %d columns, want at least K+1 = %d", opt.Block, nv)
	}
	tol := opt.Tol
	if tol == 0 {
		tol = DefaultTol
	}
	switch {
	case !(tol > 0) || math.IsInf(tol, 0) || opt.MaxIter < 0:
		return nil, 0, fmt.Errorf("spectral: tolerance %v and %d iterations, want a finite tolerance > 0 and iterations >= 0", tol, opt.MaxIter)
	case opt.Sweeps < 0 || opt.CellRows == 1 || opt.Degree < 0:
		return nil, 0, fmt.Errorf("spectral: %d sweeps, %d rows a cell and degree %d, want sweeps >= 0, rows a cell other than 1 and degree >= 0", opt.Sweeps, opt.CellRows, opt.Degree)
	}
	op, deg, isolated, err := newOperator(ctx, g, max(opt.Workers, 1))
	if err != nil {
		return nil, 0, err
	}
	if b = min(b, n-isolated); b < nv {
		return nil, 0, fmt.Errorf("spectral: %d of the %d rows have an edge, fewer than K+1 = %d: ask for fewer clusters", n-isolated, n, nv)
	}
	degree := cmpOr(opt.Degree, DefaultDegree)
	if opt.Sweeps > 0 {
		degree = cmpOr(opt.Degree, DefaultSweepDegree)
	}
	return &solver{op: op, deg: deg, n: n, b: b, nv: nv, tol: tol, workers: max(opt.Workers, 1), f: filter{degree: degree},
		denseRows: cmpOr(opt.denseRows, denseRows), progress: opt.Progress, space: opt.Scratch, mapped: g.InFile()}, isolated, nil
}

// first returns the column indices 0 to k-1.
func first(k int) []int {
	cols := make([]int, k)
	for j := range cols {
		cols[j] = j
	}
	return cols
}

// cmpOr returns v, or def if v is 0.
func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// solver is the state of LOBPCG on the operator B of the filter f (A
// itself, or a polynomial of A): the block X (orthonormal columns, the
// Ritz vectors of B), its search directions P, and their products with B.
type solver struct {
	op        *operator
	deg       []float64 // P's row sums
	levels    int       // coarse graphs below this one
	denseRows int
	f         filter
	n, b, nv  int
	tol       float64
	workers   int
	x, ax     []float64 // n×b: X and B·X
	p, ap     []float64 // n×pw, the directions of the last step and B·P; pw = 0 at first
	pw        int
	r, ar     []float64 // n×b storage: residuals, then directions, and their products with B
	s1, s2    []float64 // n×b scratch
	// spare is the n×b scratch of the filter's products in LOBPCG
	// (applyB); the sweeps give it B·X's place instead.
	spare  []float64
	lambda []float64 // b Ritz values of B, descending
	// Of A (check): its Ritz values on the block's span, ascending, and the
	// Rayleigh quotients and residual norms of the block's columns.
	theta, rho, res []float64
	// least is the least Ritz value of A on the block as start made it,
	// when its block is the coarse graph's, prolonged, whose Ritz values
	// are the coarse graph's: the prolongation is an isometry that takes
	// A to the coarse A. 0: unknown.
	least    float64
	progress func(iterations, passes int, residual float64)
	// space is where the blocks are (nil: the heap), held what holds them.
	space *store.ScratchSpace
	held  []*store.Scratch
	// mapped says that the graph's arrays are in a file: P's, or, for a
	// coarse graph, gmem, the scratch file that holds them.
	mapped bool
	gmem   []byte
}

// adviseRandom advises the pages of the solver's graph, in a file, as
// read at random, or, with random false, in order (store.AdviseRandom,
// store.AdviseSequential). The advice changes no value.
func (s *solver) adviseRandom(random bool) {
	switch {
	case s.gmem == nil:
		_ = s.op.g.AdviseRandom(random)
	case random:
		_ = store.AdviseRandom(s.gmem)
	default:
		_ = store.AdviseSequential(s.gmem)
	}
}

// blocks sets each of ms to a zeroed n×b block from the solver's space.
func (s *solver) blocks(ms ...*[]float64) error {
	for _, m := range ms {
		v, sc, err := s.space.Float64s(s.n * s.b)
		if err != nil {
			return fmt.Errorf("spectral: a block of %d×%d: %w", s.n, s.b, err)
		}
		*m, s.held = v, append(s.held, sc)
	}
	return nil
}

// release frees the solver's blocks, which must not be used after.
func (s *solver) release() error {
	errs := make([]error, len(s.held))
	for i, sc := range s.held {
		errs[i] = sc.Release()
	}
	s.held = nil
	return errors.Join(errs...)
}

// start sets the block to D^½·1 and seeded random columns, the leading
// ones replaced by the coarse graph's embedding, prolonged, if cellRows >
// 0 (fromCoarse), and makes it orthonormal.
func (s *solver) start(ctx context.Context, seed uint64, level, cellRows int) error {
	n, b, deg := s.n, s.b, s.deg
	// The other blocks are made after the coarse graphs are gone.
	if err := s.blocks(&s.x); err != nil {
		return err
	}
	err := ordered.Run(ctx, s.workers, chunks(n), func() struct{} { return struct{}{} },
		func(_ context.Context, t int, _ struct{}) error {
			rng := rand.New(rand.NewPCG(seed, uint64(t)))
			for i := t * chunkRows; i < min(n, (t+1)*chunkRows); i++ {
				row := s.x[i*b : (i+1)*b]
				row[0] = math.Sqrt(deg[i])
				for c := 1; c < b; c++ {
					// A row of degree 0 is a row of A that is 0: an
					// eigenvector of a nonzero eigenvalue is 0 there,
					// and the block stays 0 there from a 0 start.
					if row[c] = rng.NormFloat64(); deg[i] == 0 {
						row[c] = 0
					}
				}
			}
			return nil
		},
		func(int, struct{}) error { return nil })
	if err != nil {
		return err
	}
	if cellRows > 0 {
		if err := s.fromCoarse(ctx, level, seed, cellRows); err != nil {
			return err
		}
	}
	// s1 first: every product gathers its rows at random (operator.apply),
	// so it is the block to keep in memory when not all of them fit.
	if err := s.blocks(&s.s1, &s.ax, &s.r, &s.s2); err != nil {
		return err
	}
	g, err := gram(ctx, s.workers, n, s.x, b, s.x, b)
	if err != nil {
		return err
	}
	t, w, err := orthonormalize(g, b)
	if err != nil {
		return err
	}
	if w < b {
		return fmt.Errorf("spectral: the starting block of %d columns has rank %d", b, w)
	}
	// The first column of T only scales D^½·1, which stays in the block.
	if err := combine(ctx, s.workers, n, s.r, b, term{m: s.x, w: b, c: t}); err != nil {
		return err
	}
	copy(s.x, s.r)
	return nil
}

// restart sets B·X by a product with B and takes the Rayleigh-Ritz step
// of X alone: the start of LOBPCG, and its restart with a new filter.
// spare is the filter's scratch (applyB), not needed while it is off.
func (s *solver) restart(ctx context.Context, spare []float64) error {
	n, b := s.n, s.b
	s.pw = 0
	if err := s.applyB(ctx, s.ax, s.x, spare, b); err != nil {
		return err
	}
	h, err := gram(ctx, s.workers, n, s.x, b, s.ax, b)
	if err != nil {
		return err
	}
	vals, vecs, err := eigenSym(h, b)
	if err != nil {
		return err
	}
	c := make([]float64, b*b)
	s.lambda = make([]float64, b)
	for j := range b {
		s.lambda[j] = vals[b-1-j]
		for i := range b {
			c[i*b+j] = vecs[i*b+b-1-j]
		}
	}
	if err := combine(ctx, s.workers, n, s.x, b, term{m: s.x, w: b, c: c}); err != nil {
		return err
	}
	return combine(ctx, s.workers, n, s.ax, b, term{m: s.ax, w: b, c: c})
}

// columnSquares returns the sums over the n rows of v(i, c)², for the b
// columns c: the partial sums of each chunk of rows, added in chunk order.
func columnSquares(ctx context.Context, workers, n, b int, v func(i, c int) float64) ([]float64, error) {
	sq := make([]float64, b)
	err := ordered.Run(ctx, workers, chunks(n),
		func() []float64 { return make([]float64, b) },
		func(_ context.Context, t int, part []float64) error {
			clear(part)
			for i := t * chunkRows; i < min(n, (t+1)*chunkRows); i++ {
				for c := range part {
					x := v(i, c)
					part[c] += float64(x * x)
				}
			}
			return nil
		},
		func(_ int, part []float64) error {
			for c, x := range part {
				sq[c] += x
			}
			return nil
		})
	return sq, err
}

// converged reports whether the leading nv residuals are within the
// tolerance.
func (s *solver) converged() bool {
	for _, r := range s.res[:s.nv] {
		if !(r <= s.tol) {
			return false
		}
	}
	return true
}

// residuals sets s.r = BX - XΛ, the residuals of B's Ritz pairs: the
// directions LOBPCG searches.
func (s *solver) residuals(ctx context.Context) error {
	return combine(ctx, s.workers, s.n, s.r, s.b, term{m: s.ax, w: s.b}, term{m: s.x, w: s.b, diag: negate(s.lambda)})
}

// iterate runs LOBPCG until convergence or maxIter iterations, and
// returns the iterations taken. Before each step it checks A's residuals,
// and restarts with a Chebyshev filter once the least Ritz value of A
// bounds one that damps enough more of the spectrum (filter.better).
func (s *solver) iterate(ctx context.Context, maxIter int) (int, error) {
	if err := s.blocks(&s.ar, &s.p, &s.ap, &s.spare); err != nil {
		return 0, err
	}
	for it := 0; ; it++ {
		if err := s.check(ctx); err != nil {
			return it, err
		}
		if s.progress != nil {
			s.progress(it, s.op.passes, slices.Max(s.res[:s.nv]))
		}
		if s.converged() || it == maxIter {
			return it, nil
		}
		if e := edgeFor(s.theta[0]); s.f.better(e) {
			s.f.on, s.f.edge = true, e
			if err := s.restart(ctx, s.spare); err != nil {
				return it, err
			}
			if err := s.check(ctx); err != nil {
				return it, err
			}
		}
		if err := s.residuals(ctx); err != nil {
			return it, err
		}
		var active []int
		for j, r := range s.res {
			if r > s.tol {
				active = append(active, j)
			}
		}
		ok, err := s.step(ctx, active)
		if err != nil || !ok {
			return it + 1, err
		}
	}
}

// orthoBasis makes the n×w block m orthogonal to the blocks against
// (whose products with A are aAgainst), in place, then orthonormal by
// SVQB into out, and applies the same combinations to its product am,
// into aout, if am is not nil. It returns the new width. out and aout
// must not be m and am: the width may shrink.
func (s *solver) orthoBasis(ctx context.Context, m []float64, w int, am []float64, against, aAgainst []term, out, aout []float64) (int, error) {
	n := s.n
	terms := []term{{m: m, w: w}}
	aterms := []term{{m: am, w: w}}
	for q, a := range against {
		c, err := gram(ctx, s.workers, n, a.m, a.w, m, w)
		if err != nil {
			return 0, err
		}
		c = negate(c)
		terms = append(terms, term{m: a.m, w: a.w, c: c})
		if am != nil {
			aterms = append(aterms, term{m: aAgainst[q].m, w: a.w, c: c})
		}
	}
	if err := combine(ctx, s.workers, n, m, w, terms...); err != nil {
		return 0, err
	}
	if am != nil {
		if err := combine(ctx, s.workers, n, am, w, aterms...); err != nil {
			return 0, err
		}
	}
	g, err := gram(ctx, s.workers, n, m, w, m, w)
	if err != nil {
		return 0, err
	}
	t, w2, err := orthonormalize(g, w)
	if err != nil || w2 == 0 {
		return 0, err
	}
	if err := combine(ctx, s.workers, n, out, w2, term{m: m, w: w, c: t}); err != nil {
		return 0, err
	}
	if am != nil {
		return w2, combine(ctx, s.workers, n, aout, w2, term{m: am, w: w, c: t})
	}
	return w2, nil
}

// step takes one LOBPCG step on the active columns; it returns false when
// the residuals of the active columns lie in the block's span (no
// direction is left to search).
func (s *solver) step(ctx context.Context, active []int) (bool, error) {
	n, b := s.n, s.b
	// R: the active residuals (in s1), orthogonal to X, orthonormal, in r.
	if err := combine(ctx, s.workers, n, s.s1, len(active), term{m: s.r, w: b, cols: active}); err != nil {
		return false, err
	}
	a, err := s.orthoBasis(ctx, s.s1, len(active), nil, []term{{m: s.x, w: b}}, nil, s.r, nil)
	if err != nil || a == 0 {
		return false, err
	}
	rr := s.r[:n*a]
	if err := s.applyB(ctx, s.ar, rr, s.spare, a); err != nil {
		return false, err
	}
	ar := s.ar[:n*a]
	// P: the last directions, orthogonal to X and R, orthonormal.
	pw := 0
	if s.pw > 0 {
		if pw, err = s.orthoBasis(ctx, s.p[:n*s.pw], s.pw, s.ap[:n*s.pw],
			[]term{{m: s.x, w: b}, {m: rr, w: a}}, []term{{m: s.ax, w: b}, {m: ar, w: a}}, s.s1, s.s2); err != nil {
			return false, err
		}
		copy(s.p, s.s1[:n*pw])
		copy(s.ap, s.s2[:n*pw])
	}
	p, ap := s.p[:n*pw], s.ap[:n*pw]
	blocks := []term{{m: s.x, w: b}, {m: rr, w: a}, {m: p, w: pw}}
	ablocks := []term{{m: s.ax, w: b}, {m: ar, w: a}, {m: ap, w: pw}}
	c, err := s.ritz(ctx, blocks, ablocks)
	if err != nil {
		return false, err
	}
	// New directions, into s1 and s2, then the new X and AX in place.
	cr, cp := c[b*b:(b+a)*b], c[(b+a)*b:]
	if err := combine(ctx, s.workers, n, s.s1, b, term{m: rr, w: a, c: cr}, term{m: p, w: pw, c: cp}); err != nil {
		return false, err
	}
	if err := combine(ctx, s.workers, n, s.s2, b, term{m: ar, w: a, c: cr}, term{m: ap, w: pw, c: cp}); err != nil {
		return false, err
	}
	if err := combine(ctx, s.workers, n, s.x, b, term{m: s.x, w: b, c: c[:b*b]}, term{m: s.s1, w: b}); err != nil {
		return false, err
	}
	if err := combine(ctx, s.workers, n, s.ax, b, term{m: s.ax, w: b, c: c[:b*b]}, term{m: s.s2, w: b}); err != nil {
		return false, err
	}
	// The directions of the active columns are the next step's P.
	if err := combine(ctx, s.workers, n, s.p, len(active), term{m: s.s1, w: b, cols: active}); err != nil {
		return false, err
	}
	if err := combine(ctx, s.workers, n, s.ap, len(active), term{m: s.s2, w: b, cols: active}); err != nil {
		return false, err
	}
	s.pw = len(active)
	return true, nil
}

// ritz solves the Rayleigh-Ritz problem of the basis S = [blocks] with
// AS = [ablocks]: it sets s.lambda to the b largest Ritz values and
// returns the m×b coefficients of their Ritz vectors, S·C.
func (s *solver) ritz(ctx context.Context, blocks, ablocks []term) ([]float64, error) {
	m := 0
	off := make([]int, len(blocks))
	for q, bl := range blocks {
		off[q] = m
		m += bl.w
	}
	g, h := make([]float64, m*m), make([]float64, m*m)
	for q, bq := range blocks {
		for u := q; u < len(blocks); u++ {
			for _, dst := range []struct {
				out   []float64
				right term
			}{{g, blocks[u]}, {h, ablocks[u]}} {
				blk, err := gram(ctx, s.workers, s.n, bq.m, bq.w, dst.right.m, dst.right.w)
				if err != nil {
					return nil, err
				}
				for i := range bq.w {
					for j := range dst.right.w {
						dst.out[(off[q]+i)*m+off[u]+j] = blk[i*dst.right.w+j]
						dst.out[(off[u]+j)*m+off[q]+i] = blk[i*dst.right.w+j]
					}
				}
			}
		}
	}
	t, mk, err := orthonormalize(g, m)
	if err != nil {
		return nil, err
	}
	if mk < s.b {
		return nil, fmt.Errorf("spectral: the search basis has rank %d, below the block's %d columns", mk, s.b)
	}
	// H' = Tᵀ H T.
	ht := matMul(h, m, m, t, mk)
	hp := matMul(transpose(t, m, mk), mk, m, ht, mk)
	vals, vecs, err := eigenSym(hp, mk)
	if err != nil {
		return nil, err
	}
	top := make([]float64, mk*s.b)
	for j := range s.b {
		s.lambda[j] = vals[mk-1-j]
		for i := range mk {
			top[i*s.b+j] = vecs[i*mk+mk-1-j]
		}
	}
	return matMul(t, m, mk, top, s.b), nil
}

// matMul returns the r×c product of the r×q matrix a and the q×c matrix b.
func matMul(a []float64, r, q int, b []float64, c int) []float64 {
	out := make([]float64, r*c)
	for i := range r {
		for l := range q {
			x := a[i*q+l]
			for j := range c {
				out[i*c+j] += float64(x * b[l*c+j])
			}
		}
	}
	return out
}
