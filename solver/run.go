package solver

import (
	"cmp"
	"context"
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
	"github.com/ssnmf/ssnmf/score"
	"github.com/ssnmf/ssnmf/spectral"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/checkpoint"
	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/trace"
)

// Observer is told what a run does as it goes, for its progress lines.
// Its methods are called on the run's goroutine.
type Observer interface {
	// Iteration is told each iteration of start s, once it is in the
	// trace.
	Iteration(s int, it fw.Iteration)
	// Sweep is told the rows a rowcd sweep has visited so far, 0 as the
	// sweep begins.
	Sweep(rows int)
	// StartBegun is told that start s of n, seeded by seed, begins.
	StartBegun(s, n int, seed uint64)
	// Resumed is told the checkpointed state of start s that a resumed
	// run goes on from.
	Resumed(s int, st *fw.State)
	// Checkpointed is told that the checkpoint of iteration iter was
	// saved, which took d.
	Checkpointed(iter int, d time.Duration)
	// SpectralProgress is told each iteration of the spectral embedding:
	// its passes over P so far, its largest residual and the time since
	// it began.
	SpectralProgress(it, passes int, residual float64, elapsed time.Duration)
	// SpectralDone is told the spectral embedding made and its report.
	SpectralDone(e *spectral.Embedding, rep *SpectralReport)
}

// A CheckpointError is the error of a checkpoint that a resumed run
// cannot go on from: it does not load, or does not fit the run.
type CheckpointError struct{ Err error }

// Error returns the text of the error that e wraps.
func (e *CheckpointError) Error() string { return e.Err.Error() }

// Unwrap returns the error that e wraps.
func (e *CheckpointError) Unwrap() error { return e.Err }

func checkpointErrorf(format string, args ...any) error {
	return &CheckpointError{fmt.Errorf(format, args...)}
}

// Run is the solve of a P that is set up: the method from every start,
// the best W kept, the checkpoints and the resume from one. Solve and the
// command ssnmf solve both run it; the caller builds the problem
// (NewProblem) and the workspace, sets the settings (the fields up to
// Kernel) and calls Scale, then Solve; the fields after Kernel are the
// run's outcome.
type Run struct {
	// Options are the run's settings, K resolved (at least 1); Scale and
	// Solve resolve the rest in place, Starts 0 by StartsFor.
	Options Options
	// Problem is the input and P; Meter meters P's passes, and the
	// methods see P through it.
	Problem *Problem
	Meter   *Meter
	// Workspace holds W, P·W, the method's scratch and the best W.
	Workspace *Workspace
	// Observer, if not nil, is told the run's progress.
	Observer Observer
	// Stop, if not nil, is polled between iterations: once it returns
	// true, a method that saves checkpoints saves one and ends (status
	// fw.Stopped), and the work that saves none ends at once.
	Stop func() bool
	// Begin is the start of the whole run, from which Options.MaxTime
	// counts; the zero time is the call of Scale.
	Begin time.Time
	// Trace keeps the record of every iteration, for the checkpoints (nil:
	// the run makes one that only keeps it); TraceName names it in errors
	// ("the trace" if "").
	Trace     *trace.Writer
	TraceName string
	// FS is the file system the checkpoints are written through (vfs.OS{}
	// if nil).
	FS vfs.FS
	// Saved, for a resumed run, is its checkpoint's settings; its state is
	// loaded from the workspace's checkpoint. Args and Kernel are what a
	// checkpoint keeps of the caller's settings and of the kernels that
	// ran (Saved.Args, Saved.Kernel).
	Saved  *Saved
	Args   []string
	Kernel string

	// Starts are the starts that ended, in order; Best indexes the best.
	Starts []Start
	Best   int
	// ResumedAt is the iteration a resumed run went on from.
	ResumedAt int
	// Penalty is the penalty method's report of the best start, KMeans
	// the kmeans method's clustering, Spectral the report of the graph's
	// spectral embedding where one was made.
	Penalty  *fw.PenaltyReport
	KMeans   *kmeans.Result
	Spectral *SpectralReport
	// Checkpointed reports that a checkpoint of the current state was
	// saved.
	Checkpointed bool
	// InitRule says how Init auto was resolved (chooseInit); "" for
	// another Init.
	InitRule string

	resolved    bool // Options are resolved
	info        methods.Method
	start       int // the start being solved
	best        *fw.Result
	bestFile    int               // the start whose W is in the file Workspace.BestPath(bestFile); -1 none
	stale       []string          // files of earlier best Ws, removed at the next checkpoint
	savedBest   int               // the start whose best W the last checkpoint names; -1 none
	bestPenalty *fw.PenaltyReport // of the best start
	sizesKM     *kmeans.Result    // the sizes rule's k-means start of the run's seed, which start 0 reuses
	spectral    *spectral.Start   // the graph's spectral start; made on first use
}

// Start is the outcome of one start, as the summary records it.
type Start struct {
	Seed      uint64  `json:"seed"`
	Objective float64 `json:"objective"`
	Gap       float64 `json:"gap"`
	// ModelTerm is ¼||WᵀW||² of the start's W: with the objective and
	// ||P||², it gives ⟨P, WWᵀ⟩, so a study can compare starts at each
	// one's own best scale of P (studies/spectral/README.md).
	ModelTerm  float64 `json:"model_term"`
	Iterations int     `json:"iterations"`
	// ARI of the start's clusters against the labels, if any: the study
	// reads how well the objective ranks the starts from it.
	ARI *float64 `json:"ari,omitempty"`
	// Stop is the rule that ended the start (fw.Status's name); Status
	// the same, set when the start ended in this process.
	Stop   string    `json:"stop,omitempty"`
	Status fw.Status `json:"-"`
}

// SpectralReport is the report of a spectral embedding
// (spectral.Embedding): the K+1 leading eigenvalues of D^-½ P D^-½, the
// graph's connected components and the eigengap they make
// (spectral.Eigengap), the residual norms of their unit eigenvectors, the
// tolerance of LOBPCG and its iterations, or the sweeps of an approximate
// embedding, the coarse graphs below P, the products with P (passes), the
// time, and the bandwidth of the soft memberships.
type SpectralReport struct {
	Eigenvalues  []float64 `json:"eigenvalues"`
	Components   int       `json:"components"`
	Eigengap     Eigengap  `json:"eigengap"`
	Residuals    []float64 `json:"residuals"`
	Tol          float64   `json:"tol,omitempty"`
	Converged    bool      `json:"converged"`
	Block        int       `json:"block"`
	Sweeps       int       `json:"sweeps,omitempty"`
	Iterations   int       `json:"iterations"`
	Levels       int       `json:"levels"`
	Passes       int       `json:"passes"`
	Seconds      float64   `json:"seconds"`
	IsolatedRows int       `json:"isolated_rows,omitempty"`
	Beta         float64   `json:"beta"`
	// ScratchFileBytes are the bytes of its blocks and coarse graphs made
	// in scratch files of the work directory, beyond the memory the
	// budget left them (Workspace.ScratchSpace); 0: all in memory.
	ScratchFileBytes int64 `json:"scratch_file_bytes,omitempty"`
}

// newSpectralReport returns the report of the embedding e, made by LOBPCG
// to spectral.DefaultTol or by sweeps sweeps, computed in elapsed, whose
// memberships take the bandwidth beta.
func newSpectralReport(e *spectral.Embedding, sweeps int, beta float64, elapsed time.Duration) *SpectralReport {
	r := &SpectralReport{Eigenvalues: e.Values, Components: e.Components, Eigengap: Eigengap(spectral.Eigengap(e.Values, e.K, e.Components)),
		Residuals: e.Residuals, Block: e.Block, Sweeps: sweeps,
		Iterations: e.Iterations, Levels: e.Levels, Passes: e.Passes, Seconds: elapsed.Seconds(), IsolatedRows: e.Isolated, Beta: beta}
	if sweeps == 0 { // LOBPCG, to its tolerance
		r.Tol, r.Converged = spectral.DefaultTol, e.Converged
	}
	return r
}

// Solve runs the method from every start (or from the checkpoint, and then
// the starts after its own) and leaves the best W in the workspace: the
// least objective, ties to the lower start. A run stopped by MaxTime runs
// no further start; its answer is the best W so far.
func (r *Run) Solve(ctx context.Context) (*fw.Result, error) {
	if err := r.resolve(); err != nil {
		return nil, err
	}
	if err := r.chooseInit(ctx); err != nil {
		return nil, err
	}
	o, ws := r.Options, r.Workspace
	if r.info.OwnStart {
		// One run: a method that makes its own W from a clustering keeps
		// the best of the clustering's starts, and replaces the feasible
		// W it is given.
		if err := fw.Initialize(ws.W, o.K, fw.StartCorners, o.Seed); err != nil {
			return nil, err
		}
		res, err := r.method(ctx, nil)
		if err == nil && res.Status != fw.Stopped {
			r.addStart(o.Seed, res)
		}
		return res, err
	}
	first, resume, err := r.resume()
	if err != nil {
		return nil, err
	}
	st := &Starts{N: o.Starts, Seed: o.Seed, First: first, Best: r.best, KeepBest: r.keepBest,
		Ended: func(_ int, seed uint64, res *fw.Result) { r.addStart(seed, res) }}
	st.Start = func(ctx context.Context, s int, seed uint64) (*fw.Result, error) {
		r.Trace.Start, r.start = s, s
		if o.Starts > 1 && r.Observer != nil {
			r.Observer.StartBegun(s, o.Starts, seed)
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
	if err != nil || res.Status == fw.Stopped || o.Starts == 1 {
		return res, err
	}
	copy(ws.W, ws.Best)
	r.Penalty = r.bestPenalty
	return res, nil
}

// resolve resolves the run's Options, once: their defaults, and the
// starts of StartsFor if 0.
func (r *Run) resolve() error {
	if r.resolved {
		return nil
	}
	o, err := r.Options.withDefaults()
	if err != nil {
		return err
	}
	r.info, _ = methods.Lookup(o.Method)
	if err := o.fits(r.info, r.Problem); err != nil {
		return err
	}
	if o.Starts == 0 {
		o.Starts = StartsFor(r.info, r.Problem.Graph() != nil, r.Problem.N())
	}
	r.Options, r.resolved = o, true
	r.bestFile, r.savedBest = -1, -1
	if r.Begin.IsZero() {
		r.Begin = time.Now()
	}
	if r.Trace == nil {
		r.Trace = trace.NewWriter(nil)
	}
	return nil
}

// fits checks that the settings o, of the method info, fit the problem
// pr: fewer clusters than rows, the features for a k-means start, a
// method of the features or a model, a graph for the spectral embedding.
func (o Options) fits(info methods.Method, pr *Problem) error {
	switch {
	case o.K < 1 || o.K >= pr.N():
		return fmt.Errorf("Options.K = %d is not below the %d rows, or not >= 1: a clustering needs fewer clusters than rows", o.K, pr.N())
	case pr.Table == nil && (o.Init == InitKMeans || info.Features):
		return fmt.Errorf("Options.Init %s and Options.Method %s: P has no features (a file's without the input)", o.Init, o.Method)
	case pr.Table == nil && o.Model != "":
		return fmt.Errorf("Options.Model %s: P has no features (a file's without the input), which a model measures new rows against", o.Model)
	case (info.Graph || o.Init == InitSpectral) && pr.Graph() == nil:
		return fmt.Errorf("Options.Method %s with Init %s needs a sparse P, whose graph it embeds: not Gaussian", o.Method, o.Init)
	}
	return nil
}

// keepBest makes the W of start s, which ended in res, the best so far:
// copied to the workspace's Best and, for a method that saves
// checkpoints, to the file best-S.mat, synced before any checkpoint names
// it. The file of the previous best is removed once a checkpoint no
// longer needs it.
func (r *Run) keepBest(s int, res *fw.Result) error {
	ws := r.Workspace
	if err := ws.KeepBest(); err != nil {
		return err
	}
	r.best, r.Best, r.bestPenalty = res, s, r.Penalty
	if !r.info.Checkpoints {
		return nil
	}
	if err := WriteMatrix(ws.BestPath(s), ws.W, ws.N, ws.K); err != nil {
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
// InitStarts) with beta = gamma, those of a k-means clustering of the
// graph's spectral embedding (Init spectral), or a random point.
func (r *Run) initialize(ctx context.Context, seed uint64) error {
	o, ws := r.Options, r.Workspace
	switch o.Init {
	case InitSpectral:
		st, err := r.spectralStart(ctx)
		if err != nil {
			return err
		}
		_, err = st.Memberships(ctx, ws.W, o.K, r.kmeansStart(ws.N, st.K, seed))
		if r.start == o.Starts-1 {
			// The last start's W is made: the rows (n×K on the heap) are
			// not needed again, and the sweeps may want their memory for
			// the page cache. A later need makes them again, the same bits.
			r.spectral = nil
		}
		return err
	case InitKMeans:
	default:
		start, err := fw.ParseStart(o.Init)
		if err != nil {
			return fmt.Errorf("Options.Init: %w", err)
		}
		return fw.Initialize(ws.W, o.K, start, seed)
	}
	tab, km := r.Problem.Table, r.sizesKM
	if km == nil || seed != o.Seed {
		var err error
		if km, err = kmeans.Cluster(ctx, tab.Features, tab.N, tab.P, o.K, r.kmeansStart(tab.N, tab.P, seed)); err != nil {
			return fmt.Errorf("-init kmeans: %w", err)
		}
	}
	return km.Soft(ws.W, tab.Features, r.Problem.Gamma)
}

// kmeansStart returns the settings of the k-means start of n rows of p
// features, seeded with seed: the start of the rows in the input's order,
// so that it does not depend on the order the approximate kNN search
// moves them into.
func (r *Run) kmeansStart(n, p int, seed uint64) kmeans.Settings {
	return KMeansStart(n, p, r.Options.K, r.Options.InitStarts, r.Options.Workers, seed, r.Problem.Order)
}

// Scale applies the sizes rule (and auto, when it means sizes) to a
// sparse P, the other rules having been applied as P was built, resolves
// Init auto (which may make the graph's spectral embedding, which does not
// depend on P's scale), and then applies a rule's multiple
// (Options.Scale). The sizes rule's k-means comes first, so that it
// passes over the features before the embedding's rows take memory.
func (r *Run) Scale(ctx context.Context) error {
	if err := r.resolve(); err != nil {
		return err
	}
	pr := r.Problem
	sizes, auto, times := r.Options.Scale.rules()
	if sizes && !(auto && (pr.Table == nil || pr.Graph() == nil)) {
		if err := r.scaleToSizes(ctx); err != nil {
			return err
		}
	}
	if err := r.chooseInit(ctx); err != nil {
		return err
	}
	if r.Options.Init != InitKMeans {
		r.sizesKM = nil // start 0's clustering only for the k-means start
	}
	if times != 1 && pr.Graph() != nil {
		return pr.MultiplyScale(times)
	}
	return nil
}

// scaleToSizes scales P to the mass of the clusters of the k-means start
// seeded with the run's seed: Σ_j n_j² instead of the mass rule's n²/k.
// Every start solves this one P, so that their objectives compare; a
// resumed run computes the same scale again.
func (r *Run) scaleToSizes(ctx context.Context) error {
	o, tab := r.Options, r.Problem.Table
	km, err := kmeans.Cluster(ctx, tab.Features, tab.N, tab.P, o.K, r.kmeansStart(tab.N, tab.P, o.Seed))
	if err != nil {
		return fmt.Errorf("-scale sizes: %w", err)
	}
	if o.Init == InitKMeans || o.Init == InitAuto {
		r.sizesKM = km // start 0's k-means start: the same clustering
	}
	return r.Problem.ScaleToSizes(km.Sizes, fmt.Sprintf("the k-means start of seed %d", o.Seed))
}

// addStart records the outcome of a start, seeded by seed.
func (r *Run) addStart(seed uint64, res *fw.Result) {
	r.Starts = append(r.Starts, Start{Seed: seed, Objective: res.Objective, Gap: res.Gap, ModelTerm: res.Model, Iterations: res.Iterations,
		ARI: r.startARI(r.Workspace.W), Stop: res.Status.String(), Status: res.Status})
}

// startARI returns the ARI of the clusters of w, in the order of P's rows,
// against the labels; nil without labels or if it cannot be computed.
func (r *Run) startARI(w []float64) *float64 {
	pr, k := r.Problem, r.Options.K
	if pr.Table == nil || pr.Table.Labels == nil {
		return nil
	}
	pred := make([]int, pr.N())
	for q := range pred {
		i := q
		if pr.Order != nil {
			i = int(pr.Order[q])
		}
		pred[i] = store.Argmax(w[q*k : (q+1)*k])
	}
	v, err := score.ARI(pr.Table.Labels, pred)
	if err != nil {
		return nil
	}
	return &v
}

// record is the methods' Recorder: the iteration's trace row, then the
// observer.
func (r *Run) record(it fw.Iteration) error {
	if err := r.Trace.Record(it); err != nil {
		return fmt.Errorf("%s: %w", cmp.Or(r.TraceName, "the trace"), err)
	}
	if r.Observer != nil {
		r.Observer.Iteration(r.Trace.Start, it)
	}
	return nil
}

// method runs the chosen method once from the W in the workspace, or, for
// a method that saves checkpoints, from the checkpointed state resume.
func (r *Run) method(ctx context.Context, resume *fw.State) (*fw.Result, error) {
	o, ws := r.Options, r.Workspace
	set := methods.Settings(max(o.Tol, 0), o.Ftol, max(o.MaxIter, 0), max(o.Refresh, 0))
	set.Workers, set.Recorder, set.PW = o.Workers, r.record, ws.PW
	set.RelGapTol, set.ModelGapTol, set.RelFuncTol = o.Rtol, max(o.Mtol, 0), o.Frtol
	if o.MaxTime > 0 {
		// The limit is the whole run's: what the starts before this one
		// and the set-up took is spent.
		set.MaxTime = max(time.Nanosecond, o.MaxTime-time.Since(r.Begin))
	}
	p, err := r.params(ctx)
	if err != nil {
		return nil, err
	}
	m := r.info.New(p)
	prob := fw.Problem{P: r.Meter, K: o.K}
	if !r.info.Checkpoints {
		ctx, cancel := StopContext(ctx, r.Stop) // the baselines take no checkpoints: they end at once
		defer cancel()
		res, err := r.stopped(fw.Minimize(ctx, prob, ws.W, &set, m))
		if err == nil && res.Status != fw.Stopped {
			r.report(m, res)
		}
		return res, err
	}
	if err := r.checkpoints(&set, resume); err != nil {
		return nil, err
	}
	return fw.Minimize(ctx, prob, ws.W, &set, m)
}

// params returns the method's parameters: the settings of rowcd and fw,
// the features and the k-means settings of the methods that cluster them,
// and the spectral start of spectral.
func (r *Run) params(ctx context.Context) (methods.Params, error) {
	o, pr := r.Options, r.Problem
	p := methods.Params{Step: o.Step, Moves: o.Moves, BlockSize: pr.BlockSize, StripMemory: max(o.StripMemory, 0), Scratch: r.Workspace.PS}
	if r.Observer != nil {
		p.Progress = r.Observer.Sweep
	}
	if o.SweepOrder == SweepInput || o.SweepOrder == SweepAuto && pr.N() <= graph.ApproxMinRows {
		p.Visit = InputOrderVisits(pr.Order)
	}
	if ws := r.Workspace; ws != nil && p.Visit == nil {
		p.Window, p.Dir = ws.SweepWindow(), ws.Dir
	}
	starts := o.Starts
	if starts <= 1 {
		starts = KMeansStarts
	}
	p.KMeans = kmeans.Settings{Starts: starts, Seed: o.Seed, Workers: o.Workers, MaxIter: max(o.MaxIter, 0), Order: pr.Order}
	if tab := pr.Table; tab != nil {
		p.Features, p.Dim = tab.Features, tab.P
	}
	if r.info.Graph {
		st, err := r.spectralStart(ctx)
		if err != nil {
			return p, err
		}
		p.Spectral, p.SpectralDim, p.SpectralBeta = st.Rows, st.K, st.Beta
	}
	return p, nil
}

// report takes up what the method m adds to its result res: the penalty
// method's report, and the k-means run (whose Lloyd iterations are the
// run's iterations).
func (r *Run) report(m fw.Method, res *fw.Result) {
	switch m := m.(type) {
	case *fw.Penalty:
		rep := m.Report()
		r.Penalty = &rep
	case *fw.KMeans:
		r.KMeans = m.Result()
		res.Iterations = r.KMeans.Iterations
	}
}

// spectralStart returns the spectral start of the run's graph (-init
// spectral, -method spectral): its embedding is computed on first use,
// reported to the observer and kept for the summary. It depends on neither P's
// scale nor the workers, so a resumed run computes the same bits again.
// It saves no checkpoint: a signal ends it at once.
func (r *Run) spectralStart(parent context.Context) (*spectral.Start, error) {
	if r.spectral != nil {
		return r.spectral, nil
	}
	ctx, cancel := StopContext(parent, r.Stop)
	defer cancel()
	c, obs := r.Options, r.Observer
	begin := time.Now()
	opt := spectral.Options{K: c.K, Seed: c.Seed, Workers: c.Workers}
	if r.Workspace != nil {
		opt.Scratch = r.Workspace.ScratchSpace()
	}
	if !r.info.Graph { // a start needs the subspace, not residuals of 1e-6
		opt.Sweeps = spectral.StartSweeps
	}
	if obs != nil {
		opt.Progress = func(it, passes int, res float64) {
			obs.SpectralProgress(it, passes, res, time.Since(begin))
		}
	}
	e, err := spectral.Embed(ctx, r.Problem.Graph(), opt)
	switch {
	case ctx.Err() != nil && parent.Err() == nil:
		return nil, errors.New("stopped by a signal during the spectral embedding, which saves no checkpoint to resume from; run again")
	case err != nil:
		return nil, fmt.Errorf("the spectral embedding: %w", err)
	}
	st, err := spectral.NewStart(e, c.Seed)
	if err != nil {
		return nil, err
	}
	rep := newSpectralReport(e, opt.Sweeps, st.Beta, time.Since(begin))
	if opt.Scratch != nil {
		rep.ScratchFileBytes = opt.Scratch.FileBytes()
	}
	r.Spectral, r.spectral = rep, st
	if obs != nil {
		obs.SpectralDone(e, rep)
	}
	return st, nil
}

// checkpoints sets up Stop, Resume, CheckpointEvery and Checkpoint in the
// settings of a method that saves checkpoints (fw and rowcd): the
// checkpoint goes to the work directory with the run's settings, the
// current start, the starts that ended and which is best, and the trace so
// far.
func (r *Run) checkpoints(set *fw.Settings, resume *fw.State) error {
	ws := r.Workspace
	set.Stop, set.Resume, set.CheckpointEvery = r.Stop, resume, r.Options.CheckpointEvery
	settings, err := r.saved().marshal()
	if err != nil {
		return err
	}
	set.Checkpoint = func(st *fw.State) error {
		start := time.Now()
		if err := checkpoint.SaveFS(r.fs(), ws.CheckpointPath(), st, settings, r.Trace.Bytes()); err != nil {
			return err
		}
		r.Checkpointed = true
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
		if r.Observer != nil {
			r.Observer.Checkpointed(st.Iter, time.Since(start))
		}
		return nil
	}
	return nil
}

// stopped turns the cancellation of a baseline by Stop into status
// Stopped.
func (r *Run) stopped(res *fw.Result, err error) (*fw.Result, error) {
	if err != nil && r.Stop != nil && r.Stop() {
		if res == nil {
			res = &fw.Result{}
		}
		res.Status = fw.Stopped
		return res, nil
	}
	return res, err
}

// fs returns the file system of the checkpoints.
func (r *Run) fs() vfs.FS {
	if r.FS == nil {
		return vfs.OS{}
	}
	return r.FS
}

// resume loads the checkpoint of a resumed run: W and P·W into the
// workspace, the trace, the starts that had ended and the best W among
// them. It returns the start to go on with and its state; 0 and nil for a
// run that is not resumed.
func (r *Run) resume() (int, *fw.State, error) {
	saved := r.Saved
	if saved == nil {
		return 0, nil, nil
	}
	ck, err := r.load()
	if err != nil {
		return 0, nil, &CheckpointError{err}
	}
	if saved.Start < 0 || saved.Start >= r.Options.Starts || len(saved.Ended) > saved.Start {
		return 0, nil, checkpointErrorf("the checkpoint is of start %d of %d, with %d ended", saved.Start, r.Options.Starts, len(saved.Ended))
	}
	if err := r.Trace.Restore(ck.Trace); err != nil {
		return 0, nil, fmt.Errorf("%s: %w", cmp.Or(r.TraceName, "the trace"), err)
	}
	r.ResumedAt = ck.State.Iter
	if r.Observer != nil {
		r.Observer.Resumed(saved.Start, &ck.State)
	}
	r.Starts = slices.Clone(saved.Ended)
	if saved.Best != nil {
		if err := r.resumeBest(*saved.Best); err != nil {
			return 0, nil, err
		}
	}
	return saved.Start, &ck.State, nil
}

// resumeBest reads the best W of the starts that ended, start b's, from
// its file into the workspace's Best.
func (r *Run) resumeBest(b int) error {
	ws, saved := r.Workspace, r.Saved
	if b < 0 || b >= len(saved.Ended) {
		return checkpointErrorf("the checkpoint's best start %d has not ended", b)
	}
	var err error
	if ws.Best, err = ws.Matrix("best.mat"); err != nil {
		return err
	}
	if err := ReadMatrix(ws.BestPath(b), ws.Best, ws.N, ws.K); err != nil {
		return checkpointErrorf("the best W of the starts that ended: %v", err)
	}
	e := saved.Ended[b]
	r.best = &fw.Result{Objective: e.Objective, Gap: e.Gap, Iterations: e.Iterations, Status: parseStatus(e.Stop)}
	r.Best, r.bestFile, r.savedBest = b, b, b
	return nil
}

// load loads the workspace's checkpoint, its W and P·W into the
// workspace's.
func (r *Run) load() (*checkpoint.Checkpoint, error) {
	ws := r.Workspace
	return checkpoint.Load(ws.CheckpointPath(), func(n, k int) ([]float64, []float64, error) {
		if n != ws.N || k != ws.K {
			return nil, nil, fmt.Errorf("holds W for n = %d, k = %d, not %d, %d", n, k, ws.N, ws.K)
		}
		return ws.W, ws.PW, nil
	})
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

// Finish ends a run whose outputs are written: unless it stopped on its
// time limit, it removes the best W's files that no checkpoint needs and,
// if mark, marks the checkpoint finished (MarkFinished) with the outputs
// written.
func (r *Run) Finish(res *fw.Result, mark bool, outputs map[string]string) error {
	if res.Status == fw.TimeLimit {
		return nil
	}
	if err := r.Workspace.RemoveBest(r.savedBest); err != nil {
		return err
	}
	if !mark {
		return nil
	}
	return r.markFinished(res, outputs)
}
