package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/kmeans"
	"github.com/ssnmf/ssnmf/methods"
	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/spectral"
	"github.com/ssnmf/ssnmf/store/checkpoint"
)

// markFinished marks the checkpoint of the work directory finished
// (savedRun.Finished: how the last start stopped, res if no start was
// recorded, and the outputs written), so that a later -resume reports the
// run complete instead of running its end again and rewriting its
// outputs. The checkpoint keeps its state, from which a run that stopped
// on -max-iter may go on with a higher one: it is read back into the
// workspace's W and P·W, whose run is over, and saved with its settings
// amended.
func (r *solveRun) markFinished(res *fw.Result) error {
	ws, path := r.ws, r.ws.CheckpointPath()
	ck, err := checkpoint.Load(path, func(n, k int) ([]float64, []float64, error) {
		if n != ws.N || k != ws.K {
			return nil, nil, fmt.Errorf("holds W for n = %d, k = %d, not %d, %d", n, k, ws.N, ws.K)
		}
		return ws.W, ws.PW, nil
	})
	if err != nil {
		return fmt.Errorf("marking the run finished: %w", err)
	}
	var s savedRun
	if err := json.Unmarshal(ck.Settings, &s); err != nil {
		return fmt.Errorf("marking the run finished: checkpoint %s: settings: %w", path, err)
	}
	f := &finishedRun{Stop: res.Status.String(), Iterations: res.Iterations, MaxIter: r.cfg.maxIter}
	if starts := r.rep.sum.starts; len(starts) > 0 {
		f.Stop, f.Iterations = starts[len(starts)-1].Stop, starts[len(starts)-1].Iterations
	}
	if f.Outputs, err = r.cfg.outputPaths(); err != nil {
		return err
	}
	s.Finished = f
	settings, err := json.Marshal(s)
	if err != nil {
		return err
	}
	ck.State.W, ck.State.PW = ws.W, ws.PW
	if err := checkpoint.SaveFS(r.cfg.fs(), path, &ck.State, settings, ck.Trace); err != nil {
		return fmt.Errorf("the outputs are written, but marking the run finished failed (a -resume may run its end again): %w", err)
	}
	return nil
}

// solveRun is one solve: the method, its starts, checkpoints and resumption.
type solveRun struct {
	cfg          *config
	info         methods.Method // the method of -method
	prob         *problem
	meter        *solver.Meter // P, metered
	ws           *solver.Workspace
	rep          *report
	stop         func() bool
	saved        *savedRun // the checkpoint's settings when resuming
	checkpointed bool      // a checkpoint of the current state was saved
	start        int       // the start being solved
	best         *fw.Result
	bestFile     int             // the start whose W is in the file ws.BestPath(bestFile); -1 none
	stale        []string        // files of earlier best Ws, removed at the next checkpoint
	savedBest    int             // the start whose best W the last checkpoint names; -1 none
	sizesKM      *kmeans.Result  // -scale sizes: the k-means start of the run's seed, which start 0 reuses
	spectral     *spectral.Start // -init spectral, -method spectral: the graph's embedding; made on first use
	begin        time.Time       // the start of the command, for -max-time
}

// solve runs the method from every start (or from the checkpoint, and then
// the starts after its own) and leaves the best W in the workspace: the
// least objective, ties to the lower start. A run stopped by -max-time
// runs no further start; its answer is the best W so far.
func (r *solveRun) solve(ctx context.Context) (*fw.Result, error) {
	c, ws := r.cfg, r.ws
	if r.info.OwnStart {
		// One run: a method that makes its own W from a clustering keeps
		// the best of the clustering's starts, and replaces the feasible
		// W it is given.
		if err := fw.Initialize(ws.W, c.k, fw.StartCorners, c.seed); err != nil {
			return nil, err
		}
		res, err := r.method(ctx, nil)
		if err == nil && res.Status != fw.Stopped {
			r.addStart(c.seed, res)
		}
		return res, err
	}
	first, resume, err := r.resume()
	if err != nil {
		return nil, err
	}
	st := &solver.Starts{N: c.starts, Seed: c.seed, First: first, Best: r.best, KeepBest: r.keepBest,
		Ended: func(_ int, seed uint64, res *fw.Result) { r.addStart(seed, res) }}
	st.Start = func(ctx context.Context, s int, seed uint64) (*fw.Result, error) {
		r.rep.trace.Start, r.start = s, s
		if c.starts > 1 && !c.quiet {
			fmt.Fprintf(r.rep.progress.out, "ssnmf: start %d of %d (seed %d)\n", s+1, c.starts, seed)
		}
		if resume == nil {
			if err := r.initialize(ctx, seed); err != nil {
				return nil, err
			}
		}
		res, err := r.method(ctx, resume)
		resume = nil
		return res, err
	}
	res, err := st.Run(ctx)
	if err != nil || res.Status == fw.Stopped || c.starts == 1 {
		return res, err
	}
	copy(ws.W, ws.Best)
	r.rep.sum.penalty = r.rep.sum.bestPenalty
	return res, nil
}

// keepBest makes the W of start s, which ended in res, the best so far:
// copied to ws.Best and, for a method that saves checkpoints, to the file
// best-S.mat, synced before any checkpoint names it. The file of the
// previous best is removed once a checkpoint no longer needs it.
func (r *solveRun) keepBest(s int, res *fw.Result) error {
	ws := r.ws
	if err := ws.KeepBest(); err != nil {
		return err
	}
	r.best = res
	r.rep.sum.bestStart = s
	r.rep.sum.bestPenalty = r.rep.sum.penalty
	if !r.info.Checkpoints {
		return nil
	}
	if err := solver.WriteMatrix(ws.BestPath(s), ws.W, ws.N, ws.K); err != nil {
		return err
	}
	if r.bestFile >= 0 {
		r.stale = append(r.stale, ws.BestPath(r.bestFile))
	}
	r.bestFile = s
	return nil
}

// initialize sets the initial W of a start: the soft memberships of a
// k-means clustering of the features (seeded by seed; the best of
// -init-starts) with beta = gamma, those of a k-means clustering of the
// graph's spectral embedding (-init spectral), or a random point.
func (r *solveRun) initialize(ctx context.Context, seed uint64) error {
	c, ws := r.cfg, r.ws
	if c.init == initSpectral {
		st, err := r.spectralStart(ctx)
		if err != nil {
			return err
		}
		_, err = st.Memberships(ctx, ws.W, c.k, c.kmeansStart(ws.N, st.K, seed, r.prob.Order))
		return err
	}
	if c.init != initKmeans {
		return fw.Initialize(ws.W, c.k, c.start, seed)
	}
	tab, km := r.prob.tab, r.sizesKM
	if km == nil || seed != c.seed {
		var err error
		if km, err = kmeans.Cluster(ctx, tab.Features, tab.N, tab.P, c.k, c.kmeansStart(tab.N, tab.P, seed, r.prob.Order)); err != nil {
			return fmt.Errorf("-init kmeans: %w", err)
		}
	}
	return km.Soft(ws.W, tab.Features, r.prob.Gamma)
}

// checkScale checks that -scale sizes, if given, has what it needs: the
// features, for its k-means clustering (the flag table refuses -scale
// without a sparse P).
func (c *config) checkScale(prob *problem) error {
	switch {
	case !c.scale.sizes || c.scale.auto:
		return nil
	case prob.tab == nil:
		return usagef("-scale sizes needs the features for its k-means clustering: give the INPUT that -affinity was made from")
	}
	return nil
}

// scale applies -scale sizes (and auto, when it means sizes) to P, the
// other rules having been applied as P was built, and then a rule's
// multiple (-scale RULE:F).
func (r *solveRun) scale(ctx context.Context) error {
	if r.cfg.scale.sizes && !(r.cfg.scale.auto && (r.prob.tab == nil || r.prob.Graph() == nil)) {
		if err := r.scaleToSizes(ctx); err != nil {
			return err
		}
	}
	if f := r.cfg.scale.multiple(); f != 1 && r.prob.Graph() != nil {
		return r.prob.MultiplyScale(f)
	}
	return nil
}

// scaleToSizes scales P to the mass of the clusters of the k-means start
// seeded with the run's seed (-scale sizes): Σ_j n_j² instead of the mass
// rule's n²/k. Every start solves this one P, so that their objectives
// compare; a resumed run computes the same scale again.
func (r *solveRun) scaleToSizes(ctx context.Context) error {
	c, tab := r.cfg, r.prob.tab
	km, err := kmeans.Cluster(ctx, tab.Features, tab.N, tab.P, c.k, c.kmeansStart(tab.N, tab.P, c.seed, r.prob.Order))
	if err != nil {
		return fmt.Errorf("-scale sizes: %w", err)
	}
	if c.init == initKmeans {
		r.sizesKM = km // start 0's k-means start: the same clustering
	}
	return r.prob.ScaleToSizes(km.Sizes, fmt.Sprintf("the k-means start of seed %d", c.seed))
}

// resume loads the checkpoint of a resumed run: W and P·W into the
// workspace, the trace, the starts that had ended and the best W among
// them. It returns the start to go on with and its state; 0 and nil for a
// run that is not resumed.
func (r *solveRun) resume() (int, *fw.State, error) {
	ws, saved := r.ws, r.saved
	if saved == nil {
		return 0, nil, nil
	}
	ck, err := checkpoint.Load(ws.CheckpointPath(), func(n, k int) ([]float64, []float64, error) {
		if n != ws.N || k != ws.K {
			return nil, nil, fmt.Errorf("holds W for n = %d, k = %d, not %d, %d", n, k, ws.N, ws.K)
		}
		return ws.W, ws.PW, nil
	})
	if err != nil {
		return 0, nil, usagef("-resume: %v", err)
	}
	if saved.Start < 0 || saved.Start >= r.cfg.starts || len(saved.Ended) > saved.Start {
		return 0, nil, usagef("-resume: the checkpoint is of start %d of %d, with %d ended", saved.Start, r.cfg.starts, len(saved.Ended))
	}
	if err := r.rep.restoreTrace(ck.Trace); err != nil {
		return 0, nil, err
	}
	r.rep.sum.resumedAt = ck.State.Iter
	if !r.cfg.quiet {
		fmt.Fprintf(r.rep.progress.out, "ssnmf: resuming start %d at iteration %d (%d passes, %.1fs so far)\n", saved.Start, ck.State.Iter, ck.State.Passes, ck.State.Elapsed.Seconds())
	}
	r.rep.sum.starts = slices.Clone(saved.Ended)
	if saved.Best != nil {
		b := *saved.Best
		if b < 0 || b >= len(saved.Ended) {
			return 0, nil, usagef("-resume: the checkpoint's best start %d has not ended", b)
		}
		if ws.Best, err = ws.Matrix("best.mat"); err != nil {
			return 0, nil, err
		}
		if err := solver.ReadMatrix(ws.BestPath(b), ws.Best, ws.N, ws.K); err != nil {
			return 0, nil, usagef("-resume: the best W of the starts that ended: %v", err)
		}
		e := saved.Ended[b]
		r.best = &fw.Result{Objective: e.Objective, Gap: e.Gap, Iterations: e.Iterations, Status: parseStatus(e.Stop)}
		r.rep.sum.bestStart, r.bestFile, r.savedBest = b, b, b
	}
	return saved.Start, &ck.State, nil
}

// parseStatus returns the fw.Status named name, as a start's Stop has it;
// NotTerminated if none is.
func parseStatus(name string) fw.Status {
	for st := range fw.TimeLimit + 1 {
		if st.String() == name {
			return st
		}
	}
	return fw.NotTerminated
}

// addStart records the outcome of a start, seeded by seed, for the summary.
func (r *solveRun) addStart(seed uint64, res *fw.Result) {
	r.rep.sum.starts = append(r.rep.sum.starts, startResult{Seed: seed, Objective: res.Objective, Gap: res.Gap, ModelTerm: res.Model, Iterations: res.Iterations,
		ARI: r.rep.sum.startARI(r.ws.W), Stop: res.Status.String(), status: res.Status})
}

// method runs the chosen method once from the W in the workspace, or, for
// a method that saves checkpoints, from the checkpointed state resume.
func (r *solveRun) method(ctx context.Context, resume *fw.State) (*fw.Result, error) {
	c, ws := r.cfg, r.ws
	set := methods.Settings(c.tol, c.ftol, c.maxIter, c.refresh)
	set.Workers, set.Recorder, set.PW = c.workers, r.rep.record, ws.PW
	set.RelGapTol, set.ModelGapTol, set.RelFuncTol = c.rtol, c.mtol, c.frtol
	if c.maxTime > 0 {
		// The limit is the whole run's: what the starts before this one
		// and the set-up took is spent.
		set.MaxTime = max(time.Nanosecond, c.maxTime-time.Since(r.begin))
	}
	p := methods.Params{Step: c.step, Moves: c.moves, BlockSize: c.block, StripMemory: c.stripMemory,
		Progress: r.rep.progress.sweep, Scratch: ws.PS}
	if c.sweepOrder == sweepInput || c.sweepOrder == sweepAuto && r.prob.N() <= graph.ApproxMinRows {
		p.Visit = solver.InputOrderVisits(r.prob.Order)
	}
	starts := c.starts
	if starts == 1 {
		starts = solver.KMeansStarts
	}
	p.KMeans = kmeans.Settings{Starts: starts, Seed: c.seed, Workers: c.workers, MaxIter: c.maxIter, Order: r.prob.Order}
	if tab := r.prob.tab; tab != nil {
		p.Features, p.Dim = tab.Features, tab.P
	}
	if r.info.Graph {
		st, err := r.spectralStart(ctx)
		if err != nil {
			return nil, err
		}
		p.Spectral, p.SpectralDim, p.SpectralBeta = st.Rows, st.K, st.Beta
	}
	m := r.info.New(p)
	prob := fw.Problem{P: r.meter, K: c.k}
	if !r.info.Checkpoints {
		ctx, cancel := solver.StopContext(ctx, r.stop) // the baselines take no checkpoints: they end at once
		defer cancel()
		res, err := r.stopped(fw.Minimize(ctx, prob, ws.W, &set, m))
		if err == nil && res.Status != fw.Stopped {
			r.rep.sum.report(m, res)
		}
		return res, err
	}
	if err := r.checkpoints(&set, resume); err != nil {
		return nil, err
	}
	return fw.Minimize(ctx, prob, ws.W, &set, m)
}

// spectralStart returns the spectral start of the run's graph (-init
// spectral, -method spectral): its embedding is computed on first use,
// reported on stderr and kept for the summary. It depends on neither P's
// scale nor the workers, so a resumed run computes the same bits again.
// It saves no checkpoint: a signal ends it at once.
func (r *solveRun) spectralStart(parent context.Context) (*spectral.Start, error) {
	if r.spectral != nil {
		return r.spectral, nil
	}
	ctx, cancel := solver.StopContext(parent, r.stop)
	defer cancel()
	c, out := r.cfg, r.rep.progress.out
	begin, last := time.Now(), time.Now()
	opt := spectral.Options{K: c.k, Seed: c.seed, Workers: c.workers}
	if !c.quiet {
		opt.Progress = func(it, passes int, res float64) {
			if time.Since(last) >= 5*time.Second {
				last = time.Now()
				fmt.Fprintf(out, "  spectral embedding: iteration %d, %d passes over P, largest residual %.2g, %.0fs\n", it, passes, res, time.Since(begin).Seconds())
			}
		}
	}
	e, err := spectral.Embed(ctx, r.prob.Graph(), opt)
	switch {
	case stoppedIn(ctx, parent):
		return nil, errors.New("stopped by a signal during the spectral embedding, which saves no checkpoint to resume from; run again")
	case err != nil:
		return nil, fmt.Errorf("the spectral embedding: %w", err)
	}
	st, err := spectral.NewStart(e, c.seed)
	if err != nil {
		return nil, err
	}
	rep := newSpectralReport(e, st.Beta, time.Since(begin))
	r.rep.sum.spectral, r.spectral = rep, st
	if !c.quiet {
		fmt.Fprintf(out, "ssnmf: spectral embedding: %d eigenvectors (block %d), %d iterations, %d passes over P, %.1fs; eigenvalues %s; largest residual %.2g\n",
			e.K, e.Block, e.Iterations, e.Passes, rep.Seconds, formatValues(e.Values), slices.Max(e.Residuals))
	}
	if !e.Converged {
		fmt.Fprintf(out, "ssnmf: warning: the spectral embedding stopped after %d iterations with a residual of %.2g, above %g: its eigenvectors are approximate\n",
			e.Iterations, slices.Max(e.Residuals), rep.Tol)
	}
	return st, nil
}

// checkpoints sets up Stop, Resume, CheckpointEvery and Checkpoint in the
// settings of a method that saves checkpoints (fw and rowcd): the
// checkpoint goes to the work directory with the run's settings, the
// current start, the starts that ended and which is best, and the trace so
// far.
func (r *solveRun) checkpoints(set *fw.Settings, resume *fw.State) error {
	c, ws := r.cfg, r.ws
	set.Stop, set.Resume, set.CheckpointEvery = r.stop, resume, c.checkpointEvery
	settings, err := r.savedSettings()
	if err != nil {
		return err
	}
	set.Checkpoint = func(st *fw.State) error {
		start := time.Now()
		if err := checkpoint.SaveFS(c.fs(), ws.CheckpointPath(), st, settings, r.rep.trace.Bytes()); err != nil {
			return err
		}
		r.checkpointed = true
		// The checkpoint names the best W of this start's time: an
		// earlier best's file is no longer needed.
		for _, f := range r.stale {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		r.stale, r.savedBest = nil, -1
		if r.best != nil {
			r.savedBest = r.bestFile
		}
		if !c.quiet {
			fmt.Fprintf(r.rep.progress.out, "ssnmf: checkpoint at iteration %d saved in %.2fs\n", st.Iter, time.Since(start).Seconds())
		}
		return nil
	}
	return nil
}

// stopped turns the cancellation of a baseline by stop into status Stopped.
func (r *solveRun) stopped(res *fw.Result, err error) (*fw.Result, error) {
	if err != nil && r.stop != nil && r.stop() {
		if res == nil {
			res = &fw.Result{}
		}
		res.Status = fw.Stopped
		return res, nil
	}
	return res, err
}
