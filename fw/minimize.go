package fw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Method is an iterative method for the problem. Minimize drives it: the
// driver owns the loop, the stopping rules, Stop, the checkpoints, the
// records and the final exact report; a method holds its iterate's
// products and takes its steps.
type Method interface {
	// Init starts the method at the point r.W, for which it computes
	// r.PW = P·W by r.FirstPass.
	Init(ctx context.Context, r *Run) error
	// Estimate returns the objective and the gap at the current iterate.
	Estimate() Estimate
	// Iterate takes iteration it.Iter from the current iterate. it holds
	// the iteration number and the estimate before the step; Iterate sets
	// it.Step and it.PassTime and may replace it.Gap by an estimate made
	// during the iteration. If it returns a status other than
	// NotTerminated, it took no step and the run stops at the iterate with
	// that status.
	Iterate(ctx context.Context, it *Iteration) (Status, error)
	// Refresh recomputes P·W at the current iterate by a pass, free of the
	// rounding of carried updates, so that the estimate is exact (unless
	// the iterate is infeasible). A method whose P·W always comes from a
	// pass at its iterate does nothing.
	Refresh(ctx context.Context) error
}

// Estimate is a method's account of its current iterate.
type Estimate struct {
	Objective float64
	Gap       float64
	// Model is ¼||WᵀW||_F², the objective's term in W alone: the part of
	// the objective that grows as the model's n²/k, where the objective
	// grows with ||P||², as n³/(k²M) on a kNN graph of M neighbours under
	// the scale rules.
	Model float64
	// Exact reports whether Gap is the Frank-Wolfe gap at a feasible
	// iterate computed from a P·W pass there, which alone may stop a run
	// on Settings.GapTol.
	Exact bool
}

// Checkpointer is a Method whose runs can be saved and resumed with the
// same bits as a run never interrupted.
type Checkpointer interface {
	Method
	// Save returns the method's state at the current iterate. It may
	// share memory with the method and is valid until the method next
	// changes.
	Save() Payload
	// Resume restores the method, instead of Init, at the point r.W with
	// r.PW the saved P·W and the driver's counts in r, from a payload that
	// Save returned.
	Resume(ctx context.Context, r *Run, p Payload) error
}

// Finisher is a Method with work to do after the final record, such as
// Penalty's evaluation of its final point's projection.
type Finisher interface {
	Finish(ctx context.Context, r *Run) error
}

// Run is a run of Minimize as its method sees it: the problem, the point
// and its P·W, and the counts the method keeps up to date.
type Run struct {
	Problem
	N         int       // the order of P
	W         []float64 // the iterate, n×k, which the method overwrites
	PW        []float64 // storage for P·W, n×k
	Workers   int       // goroutines for the row passes
	MaxPasses int       // Settings.MaxPasses
	FrobSq    float64   // ||P||_F^2, set by FirstPass
	MaxRowSum float64   // the largest row sum of P, set by FirstPass
	Passes    int       // passes over P so far; the method counts its own

	stop func() bool // Settings.Stop, which RowCD also polls within a long sweep
}

// A moveCounter is a method that sets Iteration.Moved itself.
type moveCounter interface{ countsMoves() }

// FirstPass computes r.PW = P·W at r.W by the pass that also gives P's row
// sums and ||P||_F^2, the first pass of every method, and records the pass,
// ||P||_F^2 and the largest row sum.
func (r *Run) FirstPass(ctx context.Context) error {
	rows := make([]float64, r.N)
	frob, err := r.P.Mul(ctx, r.PW, r.W, r.K, rows)
	if err != nil {
		return err
	}
	r.FrobSq = frob
	r.Passes++
	for _, v := range rows {
		r.MaxRowSum = max(r.MaxRowSum, v)
	}
	return nil
}

// Mul sets dst = P·W for the n×k matrix w by a pass, and counts it.
func (r *Run) Mul(ctx context.Context, dst, w []float64) error {
	_, err := r.P.Mul(ctx, dst, w, r.K, nil)
	if err == nil {
		r.Passes++
	}
	return err
}

// repass rescales every row of W to sum 1, removing the drift of carried
// updates, and recomputes P·W by a pass: the refresh of a method that
// carries its products.
func (r *Run) repass(ctx context.Context) error {
	if err := normalizeRows(ctx, r.Workers, r.W, r.N, r.K); err != nil {
		return err
	}
	return r.Mul(ctx, r.PW, r.W)
}

// Minimize minimizes f(W) = 1/4 ||P - W Wᵀ||_F^2 over W >= 0 (n×k) with
// every row summing to 1, by the method m (RowCD with its defaults if nil)
// from the feasible point w, which it overwrites with the solution.
//
// At the start of every iteration it tests the stopping rules of Settings,
// then Stop and the checkpoint, then lets the method take the iteration,
// records it and, every Settings.Refresh iterations, refreshes the
// method's P·W. At the end it makes the estimate exact by a refresh if it is
// not, and records the final iterate with the objective and gap of the
// Result. It returns an error if the inputs are inconsistent, if a pass over
// P fails, if the objective is no longer finite or if ctx is canceled; the
// Result then counts the iterations and passes completed, and w may be
// caught between two iterates.
func Minimize(ctx context.Context, p Problem, w []float64, settings *Settings, m Method) (*Result, error) {
	if m == nil {
		m = &RowCD{}
	}
	n, k, err := checkProblem(p, w)
	if err != nil {
		return nil, err
	}
	var set Settings
	if settings != nil {
		set = *settings
	}
	if err := set.check(); err != nil {
		return nil, fmt.Errorf("fw: %w", err)
	}
	pw, err := storage(set.PW, n*k, "P·W")
	if err != nil {
		return nil, err
	}
	d := &driver{set: &set, m: m, start: time.Now(),
		run: &Run{Problem: p, N: n, W: w, PW: pw, Workers: set.workers(), MaxPasses: set.MaxPasses, stop: set.Stop}}
	d.cp, _ = m.(Checkpointer)
	return d.minimize(ctx)
}

// driver is the state of a Minimize call.
type driver struct {
	set   *Settings
	m     Method
	cp    Checkpointer // m, if it saves checkpoints
	run   *Run
	start time.Time
	res   Result
}

func (d *driver) minimize(ctx context.Context) (*Result, error) {
	set, r, res := d.set, d.run, &d.res
	t0, fprev := 0, math.NaN()
	if st := set.Resume; st != nil {
		if err := d.resume(ctx, st); err != nil {
			return nil, err
		}
		t0, fprev = st.Iter, st.Prev
	} else if err := d.m.Init(ctx, r); err != nil {
		return d.end(err)
	}
	res.Iterations = t0
	tol, maxIter, every := set.gapTol(), set.maxIter(), set.refresh()
	// gapStop returns the gap rule that e meets, if any.
	gapStop := func(e Estimate) Status {
		switch {
		case e.Gap <= tol:
			return GapTolerance
		case set.RelGapTol > 0 && e.Gap <= set.RelGapTol*math.Abs(e.Objective):
			return RelativeGapTolerance
		case set.ModelGapTol > 0 && e.Gap <= set.ModelGapTol*e.Model:
			return ModelGapTolerance
		}
		return NotTerminated
	}
	var labels []int32 // the clusters of the iterate, for the records' Moved
	if _, counts := d.m.(moveCounter); set.Recorder != nil && !counts {
		labels = argmaxRows(r.W, r.K)
	}
	var last Iteration // the final record's pass time, if the method stops the run
	t := t0
	for ; ; t++ {
		e := d.m.Estimate()
		if math.IsNaN(e.Objective) || math.IsInf(e.Objective, 0) {
			return d.end(fmt.Errorf("fw: iteration %d: %w", t, errNonFinite))
		}
		if !e.Exact && gapStop(e) != NotTerminated {
			// Confirm the estimate on the exact gap.
			if err := d.m.Refresh(ctx); err != nil {
				return d.end(err)
			}
			e = d.m.Estimate()
		}
		change := math.Abs(e.Objective - fprev)
		switch {
		case e.Exact && gapStop(e) != NotTerminated:
			res.Status = gapStop(e)
		case t > 0 && change < set.FuncTol:
			res.Status = FunctionConvergence
		case t > 0 && set.RelFuncTol > 0 && change <= set.RelFuncTol*math.Abs(e.Objective):
			res.Status = RelativeFunctionConvergence
		case t >= maxIter:
			res.Status = IterationLimit
		case set.MaxPasses > 0 && r.Passes >= set.MaxPasses:
			res.Status = IterationLimit
		case set.MaxTime > 0 && time.Since(d.start) >= set.MaxTime:
			res.Status = TimeLimit
			if err := d.checkpoint(t, fprev); err != nil {
				return d.end(err)
			}
		}
		if res.Status != NotTerminated {
			break
		}
		if set.Stop != nil && set.Stop() {
			return d.stop(t, fprev, e)
		}
		if ck := set.CheckpointEvery; ck > 0 && t > t0 && t%ck == 0 {
			if err := d.checkpoint(t, fprev); err != nil {
				return d.end(err)
			}
		}
		it := Iteration{Iter: t, Objective: e.Objective, Gap: e.Gap, Model: e.Model}
		status, err := d.m.Iterate(ctx, &it)
		if err != nil {
			return d.end(err)
		}
		if status == Stopped {
			// Stop asked the method to stop part way through the
			// iteration; its state goes on from there.
			return d.stop(t, fprev, e)
		}
		if status != NotTerminated {
			res.Status, last = status, it
			break
		}
		if labels != nil {
			it.Moved = moved(labels, r.W, r.K)
		}
		if err := d.record(it); err != nil {
			return d.end(err)
		}
		fprev = e.Objective
		res.Iterations = t + 1
		if every > 0 && (t+1)%every == 0 {
			if err := d.m.Refresh(ctx); err != nil {
				return d.end(err)
			}
		}
	}
	e := d.m.Estimate()
	if !e.Exact {
		if err := d.m.Refresh(ctx); err != nil {
			return d.end(err)
		}
		e = d.m.Estimate()
	}
	res.Objective, res.Gap, res.Model = e.Objective, e.Gap, e.Model
	if err := d.record(Iteration{Iter: t, Objective: e.Objective, Gap: e.Gap, Model: e.Model, Final: true, PassTime: last.PassTime}); err != nil {
		return d.end(err)
	}
	if f, ok := d.m.(Finisher); ok {
		if err := f.Finish(ctx, r); err != nil {
			return d.end(err)
		}
	}
	return d.end(nil)
}

// stop ends the run that Settings.Stop stopped at the start of iteration t
// or part way through it, e the estimate at its start, with a checkpoint.
func (d *driver) stop(t int, fprev float64, e Estimate) (*Result, error) {
	if err := d.checkpoint(t, fprev); err != nil {
		return d.end(err)
	}
	d.res.Status = Stopped
	d.res.Objective, d.res.Gap = e.Objective, e.Gap
	return d.end(nil)
}

// checkpoint saves the run's state at the start of iteration t, fprev the
// objective before it, if the method saves checkpoints and the settings
// take them.
func (d *driver) checkpoint(t int, fprev float64) error {
	r := d.run
	if d.cp == nil || d.set.Checkpoint == nil {
		return nil
	}
	st := &State{K: r.K, Iter: t, Passes: r.Passes, FrobSq: r.FrobSq, MaxRowSum: r.MaxRowSum, Prev: fprev,
		Elapsed: time.Since(d.start), Payload: d.cp.Save(), W: r.W, PW: r.PW}
	if err := d.set.Checkpoint(st); err != nil {
		return fmt.Errorf("checkpoint at iteration %d: %w", t, err)
	}
	return nil
}

// argmaxRows returns the cluster of every row of the n×k matrix w: the
// column of its largest entry, the first in a tie (as store.Argmax, which
// writes the cluster column of an output).
func argmaxRows(w []float64, k int) []int32 {
	labels := make([]int32, len(w)/k)
	for i := range labels {
		labels[i] = argmax(w[i*k : (i+1)*k])
	}
	return labels
}

// argmax returns the index of the largest entry of a feasible row, the
// first in a tie.
func argmax(row []float64) int32 {
	best := 0
	for j, v := range row {
		if v > row[best] {
			best = j
		}
	}
	return int32(best)
}

// moved returns the number of rows of w whose largest entry is no longer
// in the column of labels, and updates labels.
func moved(labels []int32, w []float64, k int) int {
	count := 0
	for i := range labels {
		if c := argmax(w[i*k : (i+1)*k]); c != labels[i] {
			labels[i] = c
			count++
		}
	}
	return count
}

// resume restores the run from st.
func (d *driver) resume(ctx context.Context, st *State) error {
	r := d.run
	switch {
	case d.cp == nil:
		return fmt.Errorf("fw: the method %T cannot resume a run", d.m)
	case d.set.PW == nil:
		return errors.New("fw: resuming needs the saved P·W in Settings.PW")
	case st.Iter < 0 || st.Passes < 0:
		return fmt.Errorf("fw: resume state: iteration %d, %d passes", st.Iter, st.Passes)
	case st.Payload == nil:
		return errors.New("fw: resume state without the method's payload")
	}
	r.Passes, r.FrobSq, r.MaxRowSum = st.Passes, st.FrobSq, st.MaxRowSum
	d.start = d.start.Add(-st.Elapsed)
	if err := d.cp.Resume(ctx, r, st.Payload); err != nil {
		return fmt.Errorf("fw: resume state: %w", err)
	}
	return nil
}

// record passes it to the Recorder, if any, with the passes so far and the
// time since the start.
func (d *driver) record(it Iteration) error {
	if d.set.Recorder == nil {
		return nil
	}
	it.Passes = d.run.Passes
	it.Elapsed = time.Since(d.start)
	return d.set.Recorder(it)
}

// end returns the result so far, with err.
func (d *driver) end(err error) (*Result, error) {
	d.res.Passes, d.res.FrobSq, d.res.MaxRowSum = d.run.Passes, d.run.FrobSq, d.run.MaxRowSum
	d.res.Runtime = time.Since(d.start)
	return &d.res, err
}

// checkProblem validates a problem and a starting point.
func checkProblem(p Problem, w []float64) (n, k int, err error) {
	if p.P == nil {
		return 0, 0, errors.New("fw: no affinity")
	}
	n, k = p.P.N(), p.K
	if k < 1 {
		return 0, 0, fmt.Errorf("fw: k = %d, want k >= 1", k)
	}
	if len(w) != n*k {
		return 0, 0, fmt.Errorf("fw: W has %d values, want n×k = %d×%d", len(w), n, k)
	}
	if err := checkSimplex(w, k, 1e-9); err != nil {
		return 0, 0, fmt.Errorf("fw: initial point: %w", err)
	}
	return n, k, nil
}

// checkSimplex reports the first row of w (k columns) that has a negative
// entry or does not sum to 1 within tol.
func checkSimplex(w []float64, k int, tol float64) error {
	for i := 0; i*k < len(w); i++ {
		var sum float64
		for j, v := range w[i*k : (i+1)*k] {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("row %d, column %d is %v, want a finite value >= 0", i, j, v)
			}
			sum += v
		}
		if math.Abs(sum-1) > tol {
			return fmt.Errorf("row %d sums to %v, want 1", i, sum)
		}
	}
	return nil
}

// storage returns buf if it is not nil, else a new slice of n values; it is
// an error for buf to have another length.
func storage(buf []float64, n int, what string) ([]float64, error) {
	if buf == nil {
		return make([]float64, n), nil
	}
	if len(buf) != n {
		return nil, fmt.Errorf("fw: %s storage has %d values, want %d", what, len(buf), n)
	}
	return buf, nil
}

// errNonFinite reports an objective that is no longer a finite number.
var errNonFinite = errors.New("the objective is not finite")
