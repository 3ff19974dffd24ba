package fw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ssnmf/ssnmf/internal/ordered"
)

// This file holds row-wise pairwise coordinate descent ("row-GS"): the rows
// of W are visited in order, and each visit moves mass within the row from
// its away vertex to its Frank-Wolfe vertex by the exact minimizer of the
// objective restricted to that row. See MinimizeRowCD.

// TileSource produces blocks of a symmetric, nonnegative n×n matrix P by
// value. Every tile.Source satisfies it.
type TileSource interface {
	// N returns the order of P.
	N() int
	// Tile writes P[r0:r1, c0:c1] into dst, row-major with stride c1-c0.
	Tile(dst []float64, r0, r1, c0, c1 int) error
}

// DefaultRowCDBlock is the number of rows of a strip when
// RowCDSettings.BlockSize is 0, and the least number of columns of the
// strip's tiles after the diagonal one.
const DefaultRowCDBlock = 256

// MinStripRows is the fewest rows of a strip that StripMemory may impose
// before a sweep falls back to two passes.
const MinStripRows = 32

// RowCDSettings control a run of MinimizeRowCD. Start from
// DefaultRowCDSettings.
type RowCDSettings struct {
	// Settings holds the stopping rules, Workers, the Recorder, Stop,
	// Checkpoint, CheckpointEvery, Resume and the storage PW for P·W; Step
	// and PS are not used. An iteration is a sweep over all rows; MaxIter
	// bounds the sweeps and Refresh is the number of sweeps between full
	// P·W passes (0: only when a stop is checked and at the end). GapTol is
	// tested first on the sum of the row gaps the sweep met, then confirmed
	// on the exact Frank-Wolfe gap from a P·W pass; FuncTol is tested on the
	// decrease of the objective over a sweep.
	//
	// Checkpoint, Stop and Resume work as for Minimize, a sweep being an
	// iteration: Checkpoint gets the State at the start of every sweep t
	// that is a multiple of CheckpointEvery, except the first sweep a run
	// (or a resumed run) takes, and when Stop stops the run. The State
	// holds the tracked objective and the pending changes of P·W
	// (State.Pending), and a run resumed from it, with its W in w and its
	// P·W in PW, ends with the same bits as one never interrupted.
	// The problem, the tile source's matrix and the settings that shape
	// the iterates (GapTol, FuncTol, Refresh, Moves, BlockSize,
	// StripMemory) must be those of the run that saved it; Workers,
	// MaxIter and CheckpointEvery may differ.
	Settings

	// Moves is the largest number of pairwise moves of a row visit; >= 1.
	Moves int
	// BlockSize is the number of rows of a strip, the block of rows whose
	// tiles are generated together; DefaultRowCDBlock if 0.
	BlockSize int
	// StripMemory bounds the bytes of the strip buffer (8 × BlockSize × n
	// for the first strip). If the strip does not fit, a strip gets fewer
	// rows, as many as fit; if fewer than MinStripRows fit, every sweep
	// generates the tiles twice, once to bring the strip's rows of P·W up
	// to date and once to pass on their changes, and costs two passes
	// instead of one. 0 means no bound.
	StripMemory int64

	// Progress, if not nil, is called with 0 at the start of every sweep
	// and, after each block of rows, with the number of rows visited so
	// far in the sweep, for progress reports during long sweeps. It is
	// called from one goroutine and should return quickly.
	Progress func(rows int)

	// products chooses how the sweep applies the changes of W to P·W, for
	// tests; the zero value chooses by build and k.
	products stripProducts
}

// stripProducts is how a sweep applies the changes of W to P·W.
type stripProducts int

const (
	productsAuto   stripProducts = iota // dense with vector instructions and k <= denseStripMaxK, else sparse
	productsDense                       // dense rows of kp values (strip.go)
	productsSparse                      // entry by entry
)

// DefaultRowCDSettings returns the stopping rules of DefaultSettings with
// at most 1000 sweeps, a P·W refresh every 100 and 3 moves a row visit.
func DefaultRowCDSettings() RowCDSettings {
	return RowCDSettings{Settings: DefaultSettings(), Moves: 3}
}

// MinimizeRowCD minimizes f(W) = 1/4 ||P - W Wᵀ||_F^2 over row-stochastic
// W >= 0 by cyclic row-wise pairwise coordinate descent from the feasible
// point w, which it overwrites with the solution.
//
// A sweep visits the rows in order. With every other row fixed, the
// objective is a quartic function h_i of row i; a visit takes the row's
// gradient g, moves mass from the away vertex b = argmax{g_j : v_j > 0} to
// the Frank-Wolfe vertex a = argmin g_j by the exact minimizer of h_i along
// e_a - e_b over the feasible interval, and repeats up to Moves times. WᵀW
// and P·W are updated by the row's change (at most 2·Moves nonzeros), and
// the objective is tracked exactly from the rows' decreases, without a pass.
//
// P is read through tiles: for every block of BlockSize rows in turn, the
// strip of P from the block's rows to the later columns is generated once,
// brings the block's rows of P·W up to date with the previous sweep's
// changes of the later rows (the pull), serves the block's sequential row
// updates through its diagonal tile, and passes the block's changes on to
// the later rows (the push). A sweep thus costs one pass over P (two with
// the StripMemory fallback), counted in Result.Passes and Iteration.Passes
// like the passes of the other methods, plus the P·W passes of the first
// point, the refreshes and the end. Tiles come from tiles, the P·W passes
// from p.P; both must give the same matrix.
//
// A run stopped by Settings.Stop returns at once with status Stopped,
// after the checkpoint and without the final pass or record: its Objective
// is the tracked one and its Gap the last sweep's estimate (the exact gap
// if no row moved since the last P·W pass).
//
// The Recorder gets one record a sweep: Objective is the tracked objective
// before the sweep, Gap the sum over rows of the row gaps
// g·w_i - min_j g_j at the moment of each row's visit (a Gauss-Seidel
// estimate of the Frank-Wolfe gap; 0 exactly when no row can move), Step
// the mass moved per row. The final record and the Result carry the
// objective and the exact Frank-Wolfe gap from a P·W pass at the returned
// W. Every parallel reduction adds its parts in a fixed order, so a run
// gives the same bits for any number of workers.
func MinimizeRowCD(ctx context.Context, p Problem, tiles TileSource, w []float64, settings *RowCDSettings) (*Result, error) {
	const method = "rowcd"
	n, k, err := checkProblem(method, p, w)
	if err != nil {
		return nil, err
	}
	if tiles == nil {
		return nil, fmt.Errorf("%s: no tile source", method)
	}
	if tiles.N() != n {
		return nil, fmt.Errorf("%s: the tile source has n = %d, the affinity n = %d", method, tiles.N(), n)
	}
	set := DefaultRowCDSettings()
	if settings != nil {
		set = *settings
	}
	if err := checkStops(method, &set.Settings); err != nil {
		return nil, err
	}
	switch {
	case set.Moves < 1 || set.Moves > 100:
		return nil, fmt.Errorf("%s: Moves = %d, want 1 to 100", method, set.Moves)
	case set.BlockSize < 0 || set.StripMemory < 0 || set.Refresh < 0 || set.CheckpointEvery < 0:
		return nil, fmt.Errorf("%s: negative BlockSize, StripMemory, Refresh or CheckpointEvery", method)
	}
	if err := checkRowCDResume(set.Resume, set.PW, n, k, 2*set.Moves); err != nil {
		return nil, fmt.Errorf("%s: resume state: %w", method, err)
	}
	b := set.BlockSize
	if b == 0 {
		b = DefaultRowCDBlock
	}
	b = min(b, n)
	strip := true
	if m := set.StripMemory; m > 0 && int64(b)*int64(n)*8 > m {
		// Fewer rows a strip, down to MinStripRows, before two passes.
		if fit := m / (8 * int64(n)); fit >= MinStripRows {
			b = int(fit)
		} else {
			strip = false
		}
	}
	r := &rowcd{ctx: ctx, p: p.P, src: tiles, n: n, k: k, b: b, cw: min(n, max(b, DefaultRowCDBlock)),
		w: w, set: set, sel: make([]int32, n), nz: 2 * set.Moves, start: time.Now(), strip: strip}
	if r.pw, err = storage(set.PW, n*k, "rowcd: P·W"); err != nil {
		return nil, err
	}
	if r.strip {
		r.buf = make([]float64, b*n)
	} else {
		r.diag = make([]float64, b*b)
	}
	r.dcol = make([]int32, n*r.nz)
	r.dval = make([]float64, n*r.nz)
	r.dcnt = make([]uint8, n)
	switch set.products {
	case productsAuto:
		r.dense = vectorStrips() && k <= denseStripMaxK
	case productsDense:
		r.dense = true
	}
	if r.dense {
		r.kp = packedWidth(k)
		r.dblock = make([]float64, b*r.kp)
	}
	return r.run()
}

// checkRowCDResume validates a state to resume a run with n×k W and nz
// pending slots a row from; a nil state is valid.
func checkRowCDResume(st *State, pw []float64, n, k, nz int) error {
	switch {
	case st == nil:
		return nil
	case pw == nil:
		return errors.New("resuming needs the saved P·W in Settings.PW")
	case st.Iter < 0 || st.Passes < 0:
		return fmt.Errorf("iteration %d, %d passes", st.Iter, st.Passes)
	case len(st.Gram) != k*k:
		return fmt.Errorf("Gram has %d values, want k×k = %d", len(st.Gram), k*k)
	case math.IsNaN(st.Objective) || math.IsInf(st.Objective, 0):
		return fmt.Errorf("objective %v", st.Objective)
	}
	return st.Pending.Check(n, k, nz)
}

// rowcd is the state of a MinimizeRowCD run.
type rowcd struct {
	ctx  context.Context
	p    Affinity
	src  TileSource
	n, k int
	b    int       // rows of a strip
	cw   int       // columns of a tile of the strip after the diagonal one
	w    []float64 // the iterate
	pw   []float64 // P·W, current for every row once the pending changes are pulled
	a    []float64 // WᵀW
	f    float64   // the tracked objective
	set  RowCDSettings
	sel  []int32

	strip  bool      // the strip fits: one pass a sweep
	dense  bool      // pull and push by dense products (strip.go)
	kp     int       // k rounded up to a multiple of 8, when dense
	dblock []float64 // a block's changes as dense rows, when dense
	buf    []float64 // the strip, its tiles one after the other
	diag   []float64 // the diagonal tile, when the strip does not fit

	// The last visit's change of every row, sparse: row i has dcnt[i]
	// entries, columns dcol[i*nz:] and values dval[i*nz:]. The changes of
	// the rows after a block are pending for that block's P·W until its
	// pull in the next sweep.
	nz   int
	dcol []int32
	dval []float64
	dcnt []uint8

	start time.Time
	res   Result
}

func (r *rowcd) run() (*Result, error) {
	res, set := &r.res, &r.set
	var gap, sweepGap, fprev float64
	var fresh bool // gap is exact while fresh
	t0 := 0
	if st := set.Resume; st != nil {
		t0, fresh, fprev = st.Iter, st.Fresh, st.Prev
		r.f, gap, sweepGap = st.Objective, st.Gap, st.SweepGap
		r.a = slices.Clone(st.Gram) // recomputed by the next sweep or refresh
		res.Iterations, res.Passes, res.FrobSq, res.MaxRowSum = st.Iter, st.Passes, st.FrobSq, st.MaxRowSum
		copy(r.dcnt, st.Pending.Count)
		copy(r.dcol, st.Pending.Col)
		copy(r.dval, st.Pending.Val)
		r.start = r.start.Add(-st.Elapsed)
	} else {
		if err := firstPass(r.ctx, r.p, r.pw, r.w, r.k, res); err != nil {
			return r.fail(err)
		}
		cur, err := evaluate(r.ctx, set.Workers, r.w, r.pw, r.n, r.k, res.FrobSq, r.sel)
		if err != nil {
			return r.fail(err)
		}
		r.a, r.f = cur.a, cur.f
		gap, fresh = cur.gap, true
		sweepGap, fprev = math.NaN(), math.NaN()
	}
	var err error
	vs := newVisitScratch(r.k)
	t := t0
	for ; ; t++ {
		if math.IsNaN(r.f) || math.IsInf(r.f, 0) {
			return r.fail(fmt.Errorf("rowcd: sweep %d: %w", t, errNonFinite))
		}
		if !fresh && sweepGap <= set.GapTol {
			// Confirm the sweep's estimate on the exact gap.
			if gap, err = r.refresh(); err != nil {
				return r.fail(err)
			}
			fresh = true
		}
		switch {
		case fresh && gap <= set.GapTol:
			res.Status = GapTolerance
		case t > 0 && math.Abs(r.f-fprev) < set.FuncTol:
			res.Status = FunctionConvergence
		case t >= set.MaxIter:
			res.Status = IterationLimit
		}
		if res.Status != NotTerminated {
			break
		}
		stop := set.Stop != nil && set.Stop()
		every := set.CheckpointEvery
		if set.Checkpoint != nil && (stop || every > 0 && t > t0 && t%every == 0) {
			if err := set.Checkpoint(r.state(t, fprev, gap, sweepGap, fresh)); err != nil {
				return r.fail(fmt.Errorf("checkpoint at sweep %d: %w", t, err))
			}
		}
		if stop {
			res.Status = Stopped
			res.Objective, res.Gap = r.f, sweepGap
			if fresh {
				res.Gap = gap
			}
			return r.fail(nil)
		}
		begin := time.Now()
		sw, err := r.sweep(vs)
		if err != nil {
			return r.fail(err)
		}
		res.Passes++
		if !r.strip {
			res.Passes++
		}
		if err := r.record(Iteration{Iter: t, Objective: r.f, Gap: sw.gap, Step: sw.moved / float64(r.n),
			PassTime: time.Since(begin)}); err != nil {
			return r.fail(err)
		}
		fprev, sweepGap = r.f, sw.gap
		r.f += sw.dec
		fresh = fresh && sw.moved == 0
		res.Iterations = t + 1
		if set.Refresh > 0 && (t+1)%set.Refresh == 0 {
			if gap, err = r.refresh(); err != nil {
				return r.fail(err)
			}
			fresh = true
		}
	}
	if !fresh {
		if gap, err = r.refresh(); err != nil {
			return r.fail(err)
		}
	}
	res.Objective, res.Gap = r.f, gap
	if err := r.record(Iteration{Iter: t, Objective: r.f, Gap: gap, Final: true}); err != nil {
		return r.fail(err)
	}
	res.Runtime = time.Since(r.start)
	return res, nil
}

// state returns the State at the start of sweep t, the solver's own
// slices in it.
func (r *rowcd) state(t int, fprev, gap, sweepGap float64, fresh bool) *State {
	return &State{Iter: t, Passes: r.res.Passes, FrobSq: r.res.FrobSq, MaxRowSum: r.res.MaxRowSum,
		Prev: fprev, Fresh: fresh, Elapsed: time.Since(r.start), Gram: r.a,
		Objective: r.f, Gap: gap, SweepGap: sweepGap,
		Pending: &Pending{NZ: r.nz, Count: r.dcnt, Col: r.dcol, Val: r.dval},
		W:       r.w, PW: r.pw}
}

func (r *rowcd) fail(err error) (*Result, error) {
	r.res.Runtime = time.Since(r.start)
	return &r.res, err
}

func (r *rowcd) record(it Iteration) error {
	return emit(r.set.Recorder, it, r.res.Passes, r.start)
}

// refresh rescales every row of W to sum 1, recomputes P·W by a full pass
// (which takes in every pending change) and evaluates the objective, WᵀW
// and the exact Frank-Wolfe gap, which it returns.
func (r *rowcd) refresh() (float64, error) {
	k := r.k
	if err := normalizeRows(r.ctx, r.set.Workers, r.w, r.n, k); err != nil {
		return 0, err
	}
	if _, err := r.p.Mul(r.ctx, r.pw, r.w, k, nil); err != nil {
		return 0, err
	}
	r.res.Passes++
	clear(r.dcnt)
	cur, err := evaluate(r.ctx, r.set.Workers, r.w, r.pw, r.n, k, r.res.FrobSq, r.sel)
	if err != nil {
		return 0, err
	}
	r.a, r.f = cur.a, cur.f
	return cur.gap, nil
}

// sweepSums are the totals of a sweep.
type sweepSums struct {
	dec   float64 // change of the objective (<= 0)
	gap   float64 // sum of the row gaps at the visits
	moved float64 // mass moved, summed over rows
}

// sweep visits every row once, block by block.
func (r *rowcd) sweep(vs *visitScratch) (sweepSums, error) {
	var tot sweepSums
	// WᵀW from W, free of the rounding of the rank-one updates.
	a, err := gram(r.ctx, r.set.Workers, r.w, r.n, r.k)
	if err != nil {
		return tot, err
	}
	r.a = a
	n, b := r.n, r.b
	if r.set.Progress != nil {
		r.set.Progress(0)
	}
	for r0 := 0; r0 < n; r0 += b {
		r1 := min(n, r0+b)
		diag, err := r.pull(r0, r1)
		if err != nil {
			return tot, err
		}
		r.updateBlock(r0, r1, diag, vs, &tot)
		if err := r.push(r0, r1); err != nil {
			return tot, err
		}
		if r.set.Progress != nil {
			r.set.Progress(r1)
		}
	}
	return tot, nil
}

// chunks returns the number of tiles of the strip of rows r0:r1: the
// diagonal tile and the tiles of up to cw columns after it.
func (r *rowcd) chunks(r1 int) int {
	return 1 + (r.n-r1+r.cw-1)/r.cw
}

// chunk returns the columns [c0, c1) of the q-th tile of the strip of rows
// r0:r1 (q = 0 is the diagonal tile), and its offset in the strip buffer.
func (r *rowcd) chunk(r0, r1, q int) (c0, c1, off int) {
	if q == 0 {
		return r0, r1, 0
	}
	c0 = r1 + (q-1)*r.cw
	return c0, min(r.n, c0+r.cw), (r1 - r0) * (c0 - r0)
}

// pullBuf is one task's memory in a pull: the tile, when it is not kept in
// the strip, and the contributions to the block's rows of P·W.
type pullBuf struct {
	tile []float64
	acc  []float64 // h×k, or h×kp for dense products
	ents []pending // the tile's pending changes, entry by entry
	dpk  []float64 // the tile's pending changes as dense rows, wd×kp
	any  bool
}

// pending is a pending change d in class c of the row in column off of a
// tile.
type pending struct {
	off, c int32
	d      float64
}

// pull generates the tiles of the strip of rows r0:r1 and adds the pending
// changes of the later rows to the block's rows of P·W. It returns the
// diagonal tile, (r1-r0)×(r1-r0).
func (r *rowcd) pull(r0, r1 int) ([]float64, error) {
	k, b := r.k, r.b
	h := r1 - r0
	tasks := r.chunks(r1)
	var diag []float64
	if r.strip {
		diag = r.buf[:h*h]
	} else {
		diag = r.diag[:h*h]
	}
	err := ordered.Run(r.ctx, r.set.Workers, tasks,
		func() *pullBuf {
			p := &pullBuf{acc: make([]float64, b*max(k, r.kp))}
			if !r.strip {
				p.tile = make([]float64, b*r.cw)
			}
			if r.dense {
				p.dpk = make([]float64, r.cw*r.kp)
			}
			return p
		},
		func(_ context.Context, q int, p *pullBuf) error {
			c0, c1, off := r.chunk(r0, r1, q)
			wd := c1 - c0
			var tl []float64
			switch {
			case q == 0:
				tl = diag
			case r.strip:
				tl = r.buf[off : off+h*wd]
			default:
				tl = p.tile[:h*wd]
			}
			if err := r.src.Tile(tl, r0, r1, c0, c1); err != nil {
				return fmt.Errorf("rowcd: tile rows %d:%d cols %d:%d: %w", r0, r1, c0, c1, err)
			}
			p.any = false
			if q == 0 {
				return nil
			}
			if r.dense {
				p.any = r.packChanges(p.dpk, c0, c1)
				if p.any {
					acc := p.acc[:h*r.kp]
					clear(acc)
					rowsMulAdd(acc, tl, h, wd, p.dpk[:wd*r.kp], r.kp)
				}
				return nil
			}
			p.ents = p.ents[:0]
			for l := c0; l < c1; l++ {
				cnt := int(r.dcnt[l])
				for e := l * r.nz; e < l*r.nz+cnt; e++ {
					p.ents = append(p.ents, pending{off: int32(l - c0), c: r.dcol[e], d: r.dval[e]})
				}
			}
			p.any = len(p.ents) > 0
			if !p.any {
				return nil
			}
			acc := p.acc[:h*k]
			clear(acc)
			for i := range h {
				row := tl[i*wd : (i+1)*wd]
				ai := acc[i*k : (i+1)*k]
				for _, en := range p.ents {
					ai[en.c] += row[en.off] * en.d
				}
			}
			return nil
		},
		func(_ int, p *pullBuf) error {
			switch {
			case p.any && r.dense:
				for i := range h {
					addTo(r.pw[(r0+i)*k:(r0+i+1)*k], p.acc[i*r.kp:])
				}
			case p.any:
				addTo(r.pw[r0*k:r1*k], p.acc[:h*k])
			}
			return nil
		})
	return diag, err
}

// packChanges writes the last changes of the rows c0:c1 into dst as dense
// rows of kp values and reports whether any row changed.
func (r *rowcd) packChanges(dst []float64, c0, c1 int) bool {
	kp := r.kp
	clear(dst[:(c1-c0)*kp])
	any := false
	for l := c0; l < c1; l++ {
		cnt := int(r.dcnt[l])
		row := dst[(l-c0)*kp : (l-c0+1)*kp]
		for e := l * r.nz; e < l*r.nz+cnt; e++ {
			row[r.dcol[e]] = r.dval[e]
		}
		any = any || cnt > 0
	}
	return any
}

// push adds the changes of the rows r0:r1, just visited, to the later rows
// of P·W. Each task owns a range of rows of P·W and adds the block's rows in
// order, so the sums do not depend on the number of workers.
func (r *rowcd) push(r0, r1 int) error {
	k, b := r.k, r.b
	h := r1 - r0
	tasks := r.chunks(r1) - 1
	moved := false
	for i := r0; i < r1; i++ {
		if r.dcnt[i] > 0 {
			moved = true
			break
		}
	}
	if tasks <= 0 || !moved {
		return nil
	}
	var dj []float64 // the block's changes as dense rows, h×kp
	if r.dense {
		dj = r.dblock[:h*r.kp]
		r.packChanges(dj, r0, r1)
	}
	return ordered.Run(r.ctx, r.set.Workers, tasks,
		func() *pushBuf {
			p := &pushBuf{}
			if !r.strip {
				p.tile = make([]float64, b*r.cw)
			}
			if r.dense {
				p.y = make([]float64, r.cw*r.kp)
			}
			return p
		},
		func(_ context.Context, t int, p *pushBuf) error {
			c0, c1, off := r.chunk(r0, r1, t+1)
			wd := c1 - c0
			var tl []float64
			if r.strip {
				tl = r.buf[off : off+h*wd]
			} else {
				tl = p.tile[:h*wd]
				if err := r.src.Tile(tl, r0, r1, c0, c1); err != nil {
					return fmt.Errorf("rowcd: tile rows %d:%d cols %d:%d: %w", r0, r1, c0, c1, err)
				}
			}
			pw := r.pw[c0*k : c1*k]
			if r.dense {
				y := p.y[:wd*r.kp]
				clear(y)
				colsMulAdd(y, tl, h, wd, dj, r.kp)
				for j := range wd {
					addTo(pw[j*k:(j+1)*k], y[j*r.kp:])
				}
				return nil
			}
			for i := r0; i < r1; i++ {
				cnt := int(r.dcnt[i])
				if cnt == 0 {
					continue
				}
				row := tl[(i-r0)*wd : (i-r0+1)*wd]
				for e, c := range r.dcol[i*r.nz : i*r.nz+cnt] {
					d := r.dval[i*r.nz+e]
					for j, pv := range row {
						pw[j*k+int(c)] += pv * d
					}
				}
			}
			return nil
		},
		func(int, *pushBuf) error { return nil })
}

// pushBuf is one task's memory in a push: the tile, when it is not kept in
// the strip, and the dense products.
type pushBuf struct {
	tile []float64
	y    []float64 // wd×kp
}

// updateBlock visits the rows r0:r1 in order, keeping the block's rows of
// P·W current through the diagonal tile.
func (r *rowcd) updateBlock(r0, r1 int, diag []float64, vs *visitScratch, tot *sweepSums) {
	k, h := r.k, r1-r0
	for i := r0; i < r1; i++ {
		pii := diag[(i-r0)*h+(i-r0)]
		wi, pwi := r.w[i*k:(i+1)*k], r.pw[i*k:(i+1)*k]
		v := visitRow(wi, pwi, r.a, pii, r.set.Moves, vs)
		tot.dec += v.dec
		tot.gap += v.gap
		tot.moved += v.moved
		// Record the change and fold it into WᵀW and the block's P·W.
		cnt := 0
		cols, vals := r.dcol[i*r.nz:(i+1)*r.nz], r.dval[i*r.nz:(i+1)*r.nz]
		for j, x := range wi {
			if d := x - vs.old[j]; d != 0 {
				cols[cnt], vals[cnt] = int32(j), d
				cnt++
			}
		}
		r.dcnt[i] = uint8(cnt)
		if cnt == 0 {
			continue
		}
		checkRows(wi, k)
		rankUpdate(r.a, k, vs.old, cols[:cnt], vals[:cnt])
		prow := diag[(i-r0)*h : (i-r0+1)*h] // P[i, r0:r1] = P[r0:r1, i]
		for l, pv := range prow {
			pl := r.pw[(r0+l)*k : (r0+l+1)*k]
			for e, c := range cols[:cnt] {
				pl[c] += pv * vals[e]
			}
		}
	}
}

// rankUpdate sets a (k×k) to a + w'w'ᵀ - wwᵀ for w' = w + d, where d has
// the values vals in the columns cols: a += d wᵀ + w dᵀ + d dᵀ.
func rankUpdate(a []float64, k int, w []float64, cols []int32, vals []float64) {
	for e, c := range cols {
		d := vals[e]
		axpy(a[int(c)*k:(int(c)+1)*k], d, w)
		for j, x := range w {
			a[j*k+int(c)] += d * x
		}
	}
	for e, c := range cols {
		for f, c2 := range cols {
			a[int(c)*k+int(c2)] += vals[e] * vals[f]
		}
	}
}

// visitScratch is the memory of a row visit.
type visitScratch struct {
	old []float64 // the row at the start of the visit
	y   []float64 // A₋ v, A₋ = WᵀW - w wᵀ
	g   []float64 // the row objective's gradient at v
}

func newVisitScratch(k int) *visitScratch {
	return &visitScratch{old: make([]float64, k), y: make([]float64, k), g: make([]float64, k)}
}

// visitResult is the outcome of a row visit.
type visitResult struct {
	dec   float64 // change of the objective (<= 0)
	gap   float64 // the row gap g·w - min_j g_j at the start of the visit
	moved float64 // mass moved
	moves int     // moves taken
}

// visitRow takes up to moves pairwise moves on the row v (overwritten; its
// value at the start is kept in vs.old) of W, where pwi is the row of P·W,
// a = WᵀW (with the row at its old value, and not changed here) and pii = P_ii.
//
// With w the row at the start and the other rows fixed, the objective as a
// function of the row is h(v) = 1/2 Σ_{l≠i} (P_il - v·w_l)^2 + 1/4 (P_ii -
// |v|^2)^2, whose gradient is g(v) = A₋ v - (PW_i - P_ii w) - (P_ii - |v|^2) v
// with A₋ = A - w wᵀ; g(w) is row i of the gradient of f.
func visitRow(v, pwi, a []float64, pii float64, moves int, vs *visitScratch) visitResult {
	k := len(v)
	w, y, g := vs.old, vs.y, vs.g
	copy(w, v)
	ww := dot(w, w)
	for j := range y {
		y[j] = -ww * w[j]
	}
	for c, x := range w {
		if x != 0 {
			axpy(y, x, a[c*k:(c+1)*k])
		}
	}
	vv := ww
	grad := func() {
		s := pii - vv
		for j := range g {
			g[j] = y[j] - (pwi[j] - pii*w[j]) - s*v[j]
		}
	}
	grad()
	var res visitResult
	lo := 0
	for j, x := range g {
		if x < g[lo] {
			lo = j
		}
	}
	res.gap = dot(g, v) - g[lo]
	for range moves {
		fa, fb := pairOf(v, g)
		if fb < 0 || !(g[fb] > g[fa]) {
			break
		}
		q := rowQuartic(a, w, v, g, pii, fa, fb)
		top := v[fb]
		s := q.scaled(top).argmin()
		if s == 0 {
			break
		}
		t := top * s
		res.dec += q.scaled(top).at(s)
		res.moved += t
		res.moves++
		for j := range y {
			y[j] += t * ((a[j*k+fa] - w[j]*w[fa]) - (a[j*k+fb] - w[j]*w[fb]))
		}
		v[fa] += t
		if s == 1 {
			v[fb] = 0
		} else {
			v[fb] -= t
		}
		vv = dot(v, v)
		grad()
	}
	return res
}

// pairOf returns the Frank-Wolfe vertex a = argmin_j g_j and the away
// vertex b = argmax{g_j : v_j > 0}; b = -1 if v has no positive entry.
// Values within tieTol·max_j |g_j| of the extreme count as ties, which go to
// the lowest index. Ties are the rule, not the exception: after an interior
// exact move from b to a, g_a = g_b in exact arithmetic, and the choice
// between them must not depend on the rounding of the carried sums.
func pairOf(v, g []float64) (a, b int) {
	var scale float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for j, x := range g {
		scale = max(scale, math.Abs(x))
		lo = min(lo, x)
		if v[j] > 0 {
			hi = max(hi, x)
		}
	}
	tol := tieTol * scale
	a, b = -1, -1
	for j, x := range g {
		if a < 0 && x <= lo+tol {
			a = j
		}
		if b < 0 && v[j] > 0 && x >= hi-tol {
			b = j
		}
	}
	return a, b
}

// tieTol is the relative width of a tie in pairOf.
const tieTol = 1e-12

// rowQuartic returns the coefficients of h(v + t(e_a - e_b)) - h(v) for
// a != b (see visitRow for h, a = WᵀW with the row at w, g = g(v)):
//
//	c1 = g_a - g_b
//	c2 = 1/2 (A₋aa + A₋bb - 2 A₋ab) + 1/4 (r1^2 - 4 r0)
//	c3 = -r1
//	c4 = 1
//
// with r0 = P_ii - |v|^2 and r1 = -2 (v_a - v_b).
func rowQuartic(a, w, v, g []float64, pii float64, fa, fb int) quartic {
	k := len(w)
	am := func(r, c int) float64 { return a[r*k+c] - w[r]*w[c] }
	r0 := pii - dot(v, v)
	r1 := -2 * (v[fa] - v[fb])
	return quartic{
		a1: g[fa] - g[fb],
		a2: (am(fa, fa)+am(fb, fb)-2*am(fa, fb))/2 + (r1*r1-4*r0)/4,
		a3: -r1,
		a4: 1,
	}
}

// scaled returns the quartic in s = t/T: q(T s).
func (q quartic) scaled(T float64) quartic {
	T2 := T * T
	return quartic{a1: q.a1 * T, a2: q.a2 * T2, a3: q.a3 * T2 * T, a4: q.a4 * T2 * T2}
}
