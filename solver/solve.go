package solver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/methods"
	"github.com/ssnmf/ssnmf/model"
	"github.com/ssnmf/ssnmf/spectral"
	"github.com/ssnmf/ssnmf/store"
)

// GraphFile is the name of a sparse P's CSR file in a work directory, where
// a resumed run finds its kNN graph.
const GraphFile = "graph.csr"

// Result is the outcome of a solve: the memberships of the best start and
// the record of every start.
type Result struct {
	N, K int
	// W holds the memberships, n×k row-major, in the input's order of the
	// rows: row i sums to 1 (but for the penalty method's).
	W []float64
	// Objective, Gap, Iterations and Status are the best start's.
	Objective, Gap float64
	Iterations     int
	Status         fw.Status
	// Passes counts the passes over P of every start.
	Passes int
	// Starts are the starts that ended, in order; Best indexes the one
	// whose W is the answer.
	Starts []Start
	Best   int
	// Scale is the factor P was scaled by (a sparse P's), and Affinity
	// describes P as the command's progress line does.
	Scale    float64
	Affinity string
	// Trace holds the record of every iteration of every start, in order.
	Trace []Record
	// Summary is the run's record, as ssnmf solve's -summary has it (but
	// for the command's engine, memory and storage I/O): with labels,
	// the scores of W against them.
	Summary *Summary
}

// Record is the record of one iteration of a start.
type Record struct {
	Start int
	fw.Iteration
}

// Cluster returns the cluster of row i, its largest membership (the lowest
// cluster on ties).
func (r *Result) Cluster(i int) int { return store.Argmax(r.Row(i)) }

// Row returns the memberships of row i, a slice of W.
func (r *Result) Row(i int) []float64 { return r.W[i*r.K : (i+1)*r.K] }

// Solve clusters the rows of in by simplicial symmetric NMF with the
// settings of opt: it builds P (package affinity), scales it, solves from
// every start (Run) and returns the memberships of the least objective. It
// is ssnmf solve without the files, the checkpoints and the progress
// lines: the same input and options give the command's bits. An Input of
// none clusters the rows of P read from opt.File, a tile file or an edge
// list (the command's -affinity FILE without INPUT).
func Solve(ctx context.Context, in Input, opt Options) (_ *Result, err error) {
	begin := time.Now()
	if opt, err = opt.withDefaults(); err != nil {
		return nil, err
	}
	if in.given() == 0 && opt.File == "" {
		return nil, errors.New("Input: give one of Rows, Record, Path and CSV, or Options.File for P without the features")
	}
	if err := opt.checkModel(); err != nil {
		return nil, err
	}
	dir, remove, err := opt.workdir()
	if err != nil {
		return nil, err
	}
	defer remove()
	s, err := newSolve(ctx, in, opt, dir)
	if err != nil {
		return nil, err
	}
	defer s.close()
	s.run.Begin = begin
	return s.solve(ctx)
}

// ModelNeeds reports, as an error, why a run of the method named method,
// whose P is read from a file if fromFile, could not save a model that
// assigns new rows: a new row's affinity is computed from the features,
// by the kNN graph's or the Gaussian kernel's rule, which a file's P has
// not, and a prediction refuses a W that may leave the simplex
// (methods.Method.Infeasible). An unknown method is left to the check of
// Options.Method.
func ModelNeeds(method string, fromFile bool) error {
	if fromFile {
		return errors.New("P is read from Options.File, so a new row's affinity cannot be computed; use the kNN graph or the Gaussian kernel of the features")
	}
	if m, err := methods.Lookup(method); err == nil && m.Infeasible {
		return fmt.Errorf("the W of Options.Method %s may leave the simplex, with negative entries, which a prediction refuses; use another method", method)
	}
	return nil
}

// checkModel refuses, before any work, a Model that no model of the
// solve could be saved in, as ssnmf solve refuses its -model: a run whose
// model could not predict (ModelNeeds), a Workdir that is the Model or
// inside it (a model directory holds the model alone), or one that
// model.CanSave refuses (its parent missing, among others).
func (o Options) checkModel() error {
	if o.Model == "" {
		return nil
	}
	err := ModelNeeds(o.Method, o.File != "")
	if err == nil && o.Workdir != "" && store.Within(o.Model, o.Workdir) {
		err = fmt.Errorf("the Workdir %s is the model directory or inside it; a model directory holds the model alone: give each its own directory", o.Workdir)
	}
	if err != nil {
		return fmt.Errorf("Options.Model %s: %w", o.Model, err)
	}
	if err := model.CanSave(o.Model); err != nil {
		return fmt.Errorf("Options.Model: %w", err)
	}
	return nil
}

// solve is one call of Solve: the run, its result and what a model of it
// needs.
type solve struct {
	run  *Run
	res  *Result
	name string // the input's, for errors and the model
}

// newSolve reads in and builds its P, scales it, and makes the workspace
// in dir; with Options.Resume, from the checkpoint there.
func newSolve(ctx context.Context, in Input, opt Options, dir string) (*solve, error) {
	saved, err := opt.checkpoint(dir)
	if err != nil {
		return nil, err
	}
	if saved != nil && opt.K == 0 {
		opt.K = saved.K
	}
	budget, err := NewBudget(opt.Memory)
	if err != nil {
		return nil, fmt.Errorf("Options.Memory: %w", err)
	}
	s := &solve{name: cmp.Or(in.display(), opt.File)}
	pr, err := opt.Open(ctx, in, Setup{Dir: dir, Name: s.name, Scratch: budget.Scratch, Saved: saved, Moments: opt.Model != "" && !opt.Raw,
		InputRead: func(tab *store.Table) (err error) {
			if opt.K, err = opt.Clusters(tab); err != nil {
				return fmt.Errorf("Options.K is required: the input has %w", err)
			}
			return nil
		}})
	var ck *CheckpointError
	if errors.As(err, &ck) {
		return nil, &CheckpointError{fmt.Errorf("Options.Resume: %w", ck.Err)}
	}
	if err != nil {
		return nil, err
	}
	s.res = &Result{N: pr.N(), K: opt.K}
	s.run = &Run{Options: opt, Problem: pr, Meter: &Meter{Affinity: pr.Affinity}, Observer: &recorder{res: s.res}, Saved: saved, Args: opt.args()}
	if err := s.open(ctx, dir, budget.Scratch); err != nil {
		pr.Close()
		return nil, err
	}
	return s, nil
}

// checkpoint returns the settings of the checkpoint in dir that
// Options.Resume goes on from (Options.Problem checks the input against
// them); nil without Resume.
func (o Options) checkpoint(dir string) (*Saved, error) {
	if !o.Resume {
		return nil, nil
	}
	saved, err := ReadSaved(dir)
	if err == nil {
		err = saved.checkOptions(o, dir)
	}
	if err != nil {
		return nil, &CheckpointError{fmt.Errorf("Options.Resume: %w", err)}
	}
	return saved, nil
}

// open checks a resumed run's P against its checkpoint, makes the
// workspace in dir, with scratch bytes of memory, and scales P (the
// spectral embedding of Init auto takes its scratch from the workspace);
// a new run in a Workdir clears what an earlier run left there.
func (s *solve) open(ctx context.Context, dir string, scratch int64) error {
	r := s.run
	if r.Saved != nil {
		if err := r.Saved.Check(r.Problem); err != nil {
			return &CheckpointError{fmt.Errorf("Options.Resume: %w", err)}
		}
	}
	var err error
	if r.Workspace, err = NewWorkspace(dir, r.Problem.N(), r.Options.K, scratch); err != nil {
		return err
	}
	if r.Saved == nil && r.Options.Workdir != "" {
		if _, err := r.Workspace.Clear(); err != nil {
			r.Workspace.Close()
			return fmt.Errorf("Options.Workdir %s: %w", dir, err)
		}
	}
	if err := r.Scale(ctx); err != nil {
		r.Workspace.Close()
		return err
	}
	return nil
}

func (s *solve) close() {
	s.run.Workspace.Close()
	s.run.Problem.Close()
}

// recorder is the Observer of Solve: it keeps the record of every
// iteration, and is told nothing else.
type recorder struct{ res *Result }

// Iteration keeps the record of the iteration it of start s.
func (r *recorder) Iteration(s int, it fw.Iteration) {
	r.res.Trace = append(r.res.Trace, Record{Start: s, Iteration: it})
}
func (*recorder) Sweep(int)                                         {}
func (*recorder) StartBegun(int, int, uint64)                       {}
func (*recorder) Resumed(int, *fw.State)                            {}
func (*recorder) Checkpointed(int, time.Duration)                   {}
func (*recorder) SpectralProgress(int, int, float64, time.Duration) {}
func (*recorder) SpectralDone(*spectral.Embedding, *SpectralReport) {}

// solve solves from every start, keeps the least objective (ties to the
// lower start), fills the result from the best W, in the input's order,
// and saves the model if asked.
func (s *solve) solve(ctx context.Context) (*Result, error) {
	run, r := s.run, s.res
	res, err := run.Solve(ctx)
	switch {
	case err != nil:
		return nil, ctxErr(ctx, err)
	case res.Status == fw.Stopped:
		return nil, errors.New("the solve was stopped")
	}
	r.Starts, r.Best = run.Starts, run.Best
	r.Objective, r.Gap, r.Iterations, r.Status = res.Objective, res.Gap, res.Iterations, res.Status
	r.Passes, r.Scale, r.Affinity = run.Meter.Passes, run.Problem.Scale, run.Problem.Describe()
	w, err := run.Workspace.InputOrder(run.Problem.Order)
	if err != nil {
		return nil, err
	}
	r.W = append([]float64(nil), w...)
	r.Summary, _ = run.Summary(res, r.W) // a score that cannot be computed is left out
	r.Summary.Input, r.Summary.Seconds = s.name, time.Since(run.Begin).Seconds()
	if o := run.Options; o.Model != "" {
		if _, err := run.SaveModel(ctx, o.Model, s.name); err != nil {
			return nil, fmt.Errorf("Options.Model: %w", err)
		}
	}
	// The best W's files are the run's to remove: nothing resumes a
	// finished solve (a time limit keeps them, for Options.Resume).
	if err := run.Finish(res, false, nil); err != nil {
		return nil, fmt.Errorf("Options.Workdir: %w", err)
	}
	return r, nil
}
