package fw

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// DefaultMoves is the number of pairwise moves of a RowCD row visit when
// RowCD.Moves is 0.
const DefaultMoves = 3

// RowCD is cyclic row-wise pairwise coordinate descent ("row-GS"), the
// default method: an iteration is a sweep that visits the rows of W in
// order. With every other row fixed, the objective is a quartic function
// h_i of row i; a visit takes the row's gradient g, moves mass from the
// away vertex b = argmax{g_j : v_j > 0} to the Frank-Wolfe vertex
// a = argmin g_j by the exact minimizer of h_i along e_a - e_b over the
// feasible interval, and repeats up to Moves times. WᵀW and P·W are updated
// by the row's change (at most 2·Moves nonzeros), and the objective is
// tracked exactly from the rows' decreases, without a pass.
//
// P is read through the affinity's Sweep, block of rows by block of rows;
// a sweep costs Sweep.Passes passes over P, counted in Result.Passes and
// Iteration.Passes like the passes of the other methods, plus the P·W
// passes of the first point, the refreshes and the end.
//
// The record of a sweep has the tracked objective before the sweep, as Gap
// the sum over rows of the row gaps g·w_i - min_j g_j at the moment of
// each row's visit (a Gauss-Seidel estimate of the Frank-Wolfe gap; 0
// exactly when no row can move), and as Step the mass moved per row. A gap
// stop is tested on that estimate, then confirmed on the exact gap of a
// P·W pass; a FuncTol stop is tested on the decrease over a sweep.
//
// The zero value is the method with DefaultMoves moves, DefaultBlockRows
// rows a block and no bound on the strip's memory. A RowCD is a
// Checkpointer; its Payload is a RowCDState, which holds the tracked
// objective, the pending changes of P·W and, when Settings.Stop stopped a
// sweep part way (it is polled every 65,536 rows or so), that sweep. The parameters that shape the
// iterates (Moves, BlockSize, StripMemory) must be the same when a run is
// resumed.
type RowCD struct {
	// Moves is the largest number of pairwise moves of a row visit, 1 to
	// 100; DefaultMoves if 0.
	Moves int
	// BlockSize and StripMemory are the SweepOptions' BlockSize and
	// Memory: the rows of a block and the bound on a strip's bytes.
	BlockSize   int
	StripMemory int64
	// Window and Dir are the SweepOptions' Window and Dir: the rows of
	// P·W a sweep of a sparse P keeps current at once, and where it sets
	// the changes of the others aside; 0 for all of them.
	Window int
	Dir    string

	// Visit, if not nil, is the order of the visits: a sweep visits the
	// rows Visit[r0], …, Visit[r1-1] for its block [r0, r1), whose rows
	// they must be. A sparse P is one block, so that any order of all the
	// rows can be given: the rows in the order of graph.Partition are
	// visited in the input's order, as they would be unmoved. Nil visits
	// the rows of a block in order.
	Visit []int32

	// Progress, if not nil, is called with 0 at the start of every sweep
	// and, after each block of rows (each sweepPollRows rows of a sweep
	// of one block), with the number of rows visited so far in the sweep,
	// for progress reports during long sweeps. It is called from one
	// goroutine and should return quickly.
	Progress func(rows int)

	// products chooses how a tile strip applies the changes, for tests.
	products stripProducts
	// pollRows is the rows between two polls of Settings.Stop in a sweep;
	// sweepPollRows if 0 (tests set fewer).
	pollRows int

	run   *Run
	sweep Sweep
	sel   []int32
	a     []float64  // WᵀW
	f     float64    // the tracked objective
	gap   float64    // the exact gap of the last P·W pass, valid while fresh
	swGap float64    // the sum of the row gaps of the last sweep; NaN before the first
	fresh bool       // P·W was computed by a pass at W
	ch    Pending    // the change of every row at its last visit, if the sweep defers changes; else NZ only
	part  *SweepPart // the sweep stopped part way, to go on with; nil between sweeps
	vs    *visitScratch
}

// sweepPollRows is the rows a sweep visits between two polls of
// Settings.Stop: a sweep of a sparse P visits its rows in chunks of this
// many (it is one block), and a sweep of tiles polls after the first block
// that ends this many rows after the last poll. At 10⁷ rows a sweep out of
// core took 200 s; a chunk takes about a 150th of that.
const sweepPollRows = 1 << 16

func (c *RowCD) setup(r *Run) error {
	moves := c.Moves
	if moves == 0 {
		moves = DefaultMoves
	}
	if moves < 1 || moves > 100 {
		return fmt.Errorf("rowcd: Moves = %d, want 1 to 100", c.Moves)
	}
	sw, err := r.P.Sweep(r.K, SweepOptions{BlockSize: c.BlockSize, Memory: c.StripMemory, Workers: r.Workers, Window: c.Window, Dir: c.Dir, products: c.products})
	if err != nil {
		return fmt.Errorf("rowcd: %w", err)
	}
	if c.Visit != nil {
		if err := checkVisit(c.Visit, sw.Blocks()); err != nil {
			return fmt.Errorf("rowcd: %w", err)
		}
	}
	nz := 2 * moves
	c.run, c.sweep, c.sel, c.vs = r, sw, make([]int32, r.N), newVisitScratch(r.K, nz)
	c.ch = Pending{NZ: nz}
	if sw.Defers() {
		c.ch.Count, c.ch.Col, c.ch.Val = make([]uint8, r.N), make([]int32, r.N*nz), make([]float64, r.N*nz)
	}
	return nil
}

// Init computes P·W at the starting point and evaluates it.
func (c *RowCD) Init(ctx context.Context, r *Run) error {
	if err := c.setup(r); err != nil {
		return err
	}
	if err := r.FirstPass(ctx); err != nil {
		return err
	}
	c.swGap = math.NaN()
	return c.evaluate(ctx)
}

// Resume restores a run from a *RowCDState.
func (c *RowCD) Resume(ctx context.Context, r *Run, p Payload) error {
	st, ok := p.(*RowCDState)
	if !ok {
		return fmt.Errorf("a %s payload, not rowcd", p.Method())
	}
	if err := c.setup(r); err != nil {
		return err
	}
	switch {
	case len(st.Gram) != r.K*r.K:
		return fmt.Errorf("Gram has %d values, want k×k = %d", len(st.Gram), r.K*r.K)
	case math.IsNaN(st.Objective) || math.IsInf(st.Objective, 0):
		return fmt.Errorf("objective %v", st.Objective)
	}
	if c.ch.Count != nil { // the sweep passes changes on from them
		if err := st.Pending.Check(r.N, r.K, c.ch.NZ); err != nil {
			return err
		}
	}
	if err := st.Part.check(r.N); err != nil {
		return err
	}
	c.f, c.gap, c.swGap, c.fresh = st.Objective, st.Gap, st.SweepGap, st.Fresh
	c.a = slices.Clone(st.Gram) // recomputed by the next sweep (unless it goes on with Part) or refresh
	if st.Part != nil {
		part := *st.Part
		c.part = &part
	}
	if c.ch.Count != nil {
		copy(c.ch.Count, st.Pending.Count)
		copy(c.ch.Col, st.Pending.Col)
		copy(c.ch.Val, st.Pending.Val)
	}
	return nil
}

// Save returns the run's RowCDState, which shares its slices with it; its
// Pending is nil if the sweep defers no change (Sweep.Defers).
func (c *RowCD) Save() Payload {
	st := &RowCDState{Fresh: c.fresh, Gram: c.a, Objective: c.f, Gap: c.gap, SweepGap: c.swGap, Part: c.part}
	if c.ch.Count != nil {
		st.Pending = &c.ch
	}
	return st
}

// countsMoves says that RowCD sets Iteration.Moved itself: the rows whose
// largest membership (the first in a tie) a sweep's visit changed, which
// a sweep stopped part way carries into its checkpoint.
func (c *RowCD) countsMoves() {}

// Estimate returns the tracked objective and the exact gap of the last
// P·W pass if no row moved since, else the last sweep's estimate.
func (c *RowCD) Estimate() Estimate {
	model := dot(c.a, c.a) / 4
	if c.fresh {
		return Estimate{Objective: c.f, Gap: c.gap, Model: model, Exact: true}
	}
	return Estimate{Objective: c.f, Gap: c.swGap, Model: model}
}

// Iterate takes a sweep, or the rest of a sweep stopped part way. It
// returns Stopped if Settings.Stop asked it to stop part way, with the
// sweep's state kept for Save.
func (c *RowCD) Iterate(ctx context.Context, it *Iteration) (Status, error) {
	begin := time.Now()
	sw, stopped, err := c.sweepRows(ctx)
	if err != nil {
		return NotTerminated, err
	}
	if stopped {
		return Stopped, nil
	}
	c.run.Passes += c.sweep.Passes()
	it.Gap, it.Step, it.PassTime, it.Moved = sw.gap, sw.moved/float64(c.run.N), time.Since(begin), sw.changed
	c.swGap = sw.gap
	c.f += sw.dec
	c.fresh = c.fresh && sw.moved == 0
	return NotTerminated, nil
}

// Refresh rescales every row of W to sum 1, recomputes P·W by a full pass
// (which takes in every pending change) and evaluates the objective, WᵀW
// and the exact Frank-Wolfe gap.
func (c *RowCD) Refresh(ctx context.Context) error {
	if err := c.run.repass(ctx); err != nil {
		return err
	}
	clear(c.ch.Count)
	return c.evaluate(ctx)
}

// evaluate sets WᵀW, the objective and the exact gap from a P·W fresh from
// a pass.
func (c *RowCD) evaluate(ctx context.Context) error {
	r := c.run
	cur, err := evaluate(ctx, r.Workers, r.W, r.PW, r.N, r.K, r.FrobSq, c.sel)
	if err != nil {
		return err
	}
	c.a, c.f, c.gap, c.fresh = cur.a, cur.f, cur.gap, true
	return nil
}

// sweepSums are the totals of a sweep.
type sweepSums struct {
	dec     float64 // change of the objective (<= 0)
	gap     float64 // sum of the row gaps at the visits
	moved   float64 // mass moved, summed over rows
	changed int     // rows whose largest membership the visit changed
}

// sweepRows visits every row once, block by block, or the rows that a
// sweep stopped part way had left. Between blocks of at least pollRows
// visits (chunks of them, in a sweep of one block) it polls the run's
// Stop, and if Stop asks, it keeps the sweep's position and sums in c.part
// and reports stopped.
func (c *RowCD) sweepRows(ctx context.Context) (tot sweepSums, stopped bool, err error) {
	r := c.run
	from := 0
	if p := c.part; p != nil {
		from, tot = p.At, sweepSums{dec: p.Dec, gap: p.Gap, moved: p.Moved, changed: p.Changed}
		c.part = nil
	} else {
		// WᵀW from W, free of the rounding of the rank-one updates.
		if c.a, err = gram(ctx, r.Workers, r.W, r.N, r.K); err != nil {
			return tot, false, err
		}
	}
	if c.Progress != nil {
		c.Progress(0)
	}
	poll := c.pollRows
	if poll <= 0 {
		poll = sweepPollRows
	}
	polled := from
	// stop polls Stop after the visits before at, if enough were made.
	stop := func(at int) bool {
		if r.stop == nil || at-polled < poll || at >= r.N {
			return false
		}
		polled = at
		if !r.stop() {
			return false
		}
		c.part = &SweepPart{At: at, Dec: tot.dec, Gap: tot.gap, Moved: tot.moved, Changed: tot.changed}
		return true
	}
	bounds := c.sweep.Blocks()
	for b := range len(bounds) - 1 {
		r0, r1 := bounds[b], bounds[b+1]
		if r1 <= from {
			continue
		}
		blk, err := c.sweep.Pull(ctx, r0, r1, r.PW, &c.ch)
		if err != nil {
			return tot, false, fmt.Errorf("rowcd: %w", err)
		}
		// A sweep of one block pulls and pushes nothing, and a block that
		// settles leaves P·W current when it settles, so either may be
		// left part way and pulled again.
		st, settles := blk.(settler)
		part := len(bounds) == 2 || settles
		for t := max(r0, from); t < r1; {
			end := r1
			if part {
				end = min(r1, t+poll)
			}
			c.visitBlock(t, end, blk, &tot)
			if t = end; part && c.Progress != nil {
				c.Progress(t)
			}
			if part && stop(t) {
				if settles {
					if err := st.Settle(r.PW); err != nil {
						return tot, false, fmt.Errorf("rowcd: %w", err)
					}
				}
				return tot, true, nil
			}
		}
		if err := c.sweep.Push(ctx, r0, r1, r.PW, &c.ch); err != nil {
			return tot, false, fmt.Errorf("rowcd: %w", err)
		}
		if !part && c.Progress != nil {
			c.Progress(r1)
		}
		if !part && stop(r1) {
			return tot, true, nil
		}
	}
	return tot, false, nil
}

// checkVisit checks that visit holds, for each block, its own rows.
func checkVisit(visit []int32, bounds []int) error {
	n := bounds[len(bounds)-1]
	if len(visit) != n {
		return fmt.Errorf("an order of visits of %d rows for %d rows", len(visit), n)
	}
	seen := make([]bool, n)
	for b := range len(bounds) - 1 {
		for t := bounds[b]; t < bounds[b+1]; t++ {
			if i := int(visit[t]); i < bounds[b] || i >= bounds[b+1] || seen[i] {
				return fmt.Errorf("visit %d is row %d, which is not a row of its block [%d, %d) or comes twice", t, i, bounds[b], bounds[b+1])
			}
			seen[visit[t]] = true
		}
	}
	return nil
}

// visitBlock visits the rows r0:r1 in order (of Visit, if set), recording
// each row's change and folding it into WᵀW and, through the block, into
// P·W: r.PW's rows, or the block's if it holds them (holder).
func (c *RowCD) visitBlock(r0, r1 int, blk Block, tot *sweepSums) {
	r, ch, vs := c.run, &c.ch, c.vs
	k, nz := r.K, ch.NZ
	pw, base := r.PW, 0
	if h, ok := blk.(holder); ok {
		pw, base = h.Rows()
	}
	for t := r0; t < r1; t++ {
		i := t
		if c.Visit != nil {
			i = int(c.Visit[t])
		}
		wi, pwi := r.W[i*k:(i+1)*k], pw[(i-base)*k:(i-base+1)*k]
		v := visitRow(wi, pwi, c.a, blk.Diag(i), nz/2, vs)
		tot.dec += v.dec
		tot.gap += v.gap
		tot.moved += v.moved
		cnt := 0
		cols, vals := vs.cols, vs.vals
		if ch.Count != nil {
			cols, vals = ch.Col[i*nz:(i+1)*nz], ch.Val[i*nz:(i+1)*nz]
		}
		for j, x := range wi {
			if d := x - vs.old[j]; d != 0 {
				cols[cnt], vals[cnt] = int32(j), d
				cnt++
			}
		}
		if ch.Count != nil {
			ch.Count[i] = uint8(cnt)
		}
		if cnt == 0 {
			continue
		}
		if argmax(vs.old) != argmax(wi) {
			tot.changed++
		}
		checkRows(wi, k)
		rankUpdate(c.a, k, vs.old, cols[:cnt], vals[:cnt])
		blk.Spread(r.PW, k, i, cols[:cnt], vals[:cnt])
	}
}
