package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ssnmf/ssnmf/cluster"
	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/internal/diskio"
	"github.com/ssnmf/ssnmf/internal/fault"
	"github.com/ssnmf/ssnmf/methods"
	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/trace"
)

// builtinCSV is the UCI yeast data set (Nakai; CC BY 4.0): 1,484 proteins,
// 8 features, 10 localization classes; data/README.md gives its source.
//
//go:embed data/yeast.csv
var builtinCSV []byte

const builtinName = "yeast.csv (built in)"

// solve is the solve command. stop, if not nil, is polled between
// iterations: once it returns true, the run saves a checkpoint and ends.
func solve(ctx context.Context, args []string, stdout, stderr io.Writer, stop func() bool) error {
	return solveFS(ctx, nil, args, stdout, stderr, stop)
}

// solveFS is solve with its outputs and checkpoints written through fsys
// (vfs.OS{} if nil).
func solveFS(ctx context.Context, fsys vfs.FS, args []string, stdout, stderr io.Writer, stop func() bool) (err error) {
	c, err := parseSolve(args, stdout)
	if err != nil {
		return err
	}
	given := givenFlags(c.flags)
	if slices.Contains(given, "starts") && slices.Contains(given, "restarts") {
		// A checkpoint's settings hold both, with one value.
		return usagef("-starts and -restarts (its former name) are both given, and only one can count: give -starts alone")
	}
	if checkOnly(ctx) {
		if c.resume != "" { // the flags are checked against the resumed run
			return nil
		}
		return c.marks.checkApplies(given, c.scope())
	}
	c.fsys = fsys
	sv := &solving{c: c, given: given, begin: time.Now(), stdout: stdout, stderr: stderr, stop: stop}
	if c.resume != "" {
		// Locked before the checkpoint is read: a run still writing it
		// refuses the resume.
		lock, err := lockWorkdir("-resume", c.resume, "wait for it to end before resuming", stderr)
		if err != nil {
			return err
		}
		defer lock.Close()
		if sv.c, sv.saved, err = resumeConfig(c, stdout); err != nil {
			return err
		}
	}
	if done, err := sv.check(); done || err != nil {
		return err
	}
	if sv.dir, sv.temp, err = sv.c.openWorkdir(); err != nil {
		return err
	}
	defer func() { // keep a temporary work directory the run can be resumed from
		if sv.temp && !sv.keep {
			os.RemoveAll(sv.dir)
		}
	}()
	if sv.c.resume == "" {
		var warn io.Writer
		if !sv.temp {
			warn = stderr
		}
		lock, err := lockWorkdir("-workdir", sv.dir, "wait for it to end, or use another -workdir", warn)
		if err != nil {
			return err
		}
		defer lock.Close()
	}
	return sv.run(ctx)
}

// solving is one solve command as it runs: its settings, its work
// directory and what it has made so far.
type solving struct {
	c      *config
	given  []string      // the flags given
	saved  *solver.Saved // the checkpoint's settings when resuming
	begin  time.Time     // the start of the command, for -max-time
	dir    string        // the work directory
	temp   bool          // dir is a temporary one made here
	keep   bool          // keep a temporary dir: the run can be resumed from it
	stdout io.Writer
	stderr io.Writer
	stop   func() bool
	prog   *progress
	rep    *report // the run's progress, trace and summary
}

// check checks the flags against the run (the resumed one's, if any),
// the kernels, the files and the model's paths; done reports a resumed
// run that had finished, which check has reported.
func (sv *solving) check() (done bool, err error) {
	c, saved := sv.c, sv.saved
	if err := c.marks.checkApplies(sv.given, c.scope()); err != nil {
		return false, err
	}
	if s := c.scope(); s.affinity == affinityGaussian || s.affinity == kindTiles {
		if err := c.checkSpectral(false); err != nil {
			return false, err
		}
	}
	if err := c.resolveKernels(saved, sv.stderr); err != nil {
		return false, err
	}
	c.neighborsGiven = slices.Contains(sv.given, "neighbors")
	if err := checkFiles(c.inputs(), c.outputs()); err != nil {
		return false, err
	}
	if err := c.checkModelPaths(); err != nil {
		return false, err
	}
	if saved != nil {
		if done, err := c.finished(saved, sv.given, sv.stderr); done || err != nil {
			return true, err
		}
	}
	c.saved = saved
	return false, nil
}

// run sets up P, solves and writes the outputs.
func (sv *solving) run(ctx context.Context) (err error) {
	c, stderr := sv.c, sv.stderr
	sv.prog = &progress{out: stderr, quiet: c.quiet, before: c.showBudget}
	c.log = func(msg string) { fmt.Fprintln(stderr, "ssnmf: "+msg) }
	if c.engine == engineSlurm && !c.quiet {
		fmt.Fprintf(stderr, "ssnmf: -engine slurm: %d tasks a step, up to %d retries, run directory %s\n", c.tasks, c.retries, filepath.Join(sv.dir, cluster.RunDir))
	}
	setup := time.Now()
	c.disk = diskio.Start()
	// The set-up saves no checkpoint: a signal ends it at once.
	setupCtx, endSetup := solver.StopContext(ctx, sv.stop)
	defer endSetup()
	prob, err := c.problem(setupCtx, sv.dir, c.run.K, sv.prog.pass)
	if err != nil {
		return sv.setupFailed(ctx, setupCtx, err)
	}
	defer prob.Close()
	defer fault.Catch(&err)() // names a fault before the close above unmaps the files
	info, err := sv.resolve(prob)
	if err != nil {
		return err
	}
	m := &solver.Meter{Affinity: prob.Affinity}
	// Open the outputs before the work, so that an unwritable path fails
	// now; they are renamed into place only once all are written.
	outs, err := c.createOutputs(ctx, sv.stdout)
	if err != nil {
		return err
	}
	defer outs.all().Abort()
	rep := sv.report(outs, prob, m, time.Since(setup))
	sv.rep = rep
	ws, err := sv.workspace(prob.N())
	if err != nil {
		return err
	}
	defer ws.Close()
	defer fault.Catch(&err)() // names a fault before the close above unmaps the files
	sr, err := sv.newRun(info, prob, m, ws, rep)
	if err != nil {
		return err
	}
	if err := sr.Scale(setupCtx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w", ctx.Err())
		}
		return sv.setupFailed(ctx, setupCtx, err)
	}
	c.disk.End("scale")
	if sr.InitRule != "" && !c.quiet {
		fmt.Fprintf(stderr, "ssnmf: -init auto: %s: -init %s\n", sr.InitRule, sr.Options.Init)
	}
	c.showBudget()
	sv.announce(prob)
	endSetup()
	res, err := sr.Solve(ctx)
	c.disk.End("solve")
	if err := sv.solved(ctx, sr, res, err); err != nil {
		return err
	}
	return sv.finish(ctx, sr, res, outs)
}

// setupFailed is the error of a set-up (P or its scale) that failed with
// err, or was stopped by a signal (setupCtx canceled while ctx was not):
// under -engine slurm, or when a step failed for good, the work directory
// is kept for a run again to reuse.
func (sv *solving) setupFailed(ctx, setupCtx context.Context, err error) error {
	switch {
	case stoppedIn(setupCtx, ctx):
		sv.keep = sv.c.engine == engineSlurm
		return stoppedInSetup(sv.c, sv.dir)
	case errors.As(err, new(*cluster.StepError)):
		sv.keep = true
		return stepFailed(err, sv.dir, false)
	}
	return err
}

// resolve resolves what the flags leave to the problem, k, the starts and
// the initial point, and checks them against it.
func (sv *solving) resolve(prob *problem) (methods.Method, error) {
	c, tab, n := sv.c, prob.Table, prob.N()
	sv.prog.n, sv.prog.entries = n, prob.Entries()
	info, _ := methods.Lookup(c.run.Method)
	var err error
	if c.run.K, err = c.run.Clusters(tab); err != nil {
		return info, usagef("-k is required: %s has %v", c.inputName(), err)
	}
	if c.run.Starts == 0 {
		c.run.Starts = solver.StartsFor(info, prob.Graph() != nil, prob.N())
	}
	if err := c.checkClusters(n, slices.Contains(sv.given, "k")); err != nil {
		return info, err
	}
	if sv.saved != nil {
		if err := sv.saved.Check(&prob.Problem); err != nil {
			return info, usagef("-resume: %v", err)
		}
	}
	if err := c.checkScale(prob); err != nil {
		return info, err
	}
	switch {
	case tab == nil && (c.run.Init == solver.InitKMeans || info.Features):
		return info, usagef("-init kmeans and -method kmeans need the features: give the INPUT that -affinity was made from")
	}
	return info, c.checkSpectral(prob.Graph() != nil)
}

// report makes the run's report: its progress, its trace (kept for
// checkpoints even without -trace) and its summary.
func (sv *solving) report(outs *outputs, prob *problem, m *solver.Meter, setup time.Duration) *report {
	var traceOut io.Writer
	if outs.trace != nil {
		traceOut = outs.trace
	}
	c := sv.c
	return &report{progress: sv.prog, trace: trace.NewWriter(traceOut),
		sum: &summaryBuilder{cfg: c, prob: prob, warn: sv.stderr, setup: setup.Seconds()}}
}

// workspace makes the run's workspace; a new run in a -workdir removes
// what an earlier run left there.
func (sv *solving) workspace(n int) (*solver.Workspace, error) {
	ws, err := solver.NewWorkspace(sv.dir, n, sv.c.run.K, sv.c.budget.Scratch)
	if err != nil {
		return nil, err
	}
	sv.c.placeWorkspace(ws)
	if sv.saved != nil || sv.temp {
		return ws, nil
	}
	had, err := ws.Clear()
	if err != nil {
		ws.Close()
		return nil, fmt.Errorf("-workdir %s: %w", sv.dir, err)
	}
	if had && !sv.c.quiet {
		fmt.Fprintf(sv.stderr, "ssnmf: -workdir %s: removed the checkpoint of an earlier run: a new run starts clean (ssnmf solve -resume %s goes on from a checkpoint instead)\n", sv.dir, sv.dir)
	}
	return ws, nil
}

// announce prints the run's line: the input, P and the settings.
func (sv *solving) announce(prob *problem) {
	c := sv.c
	if c.quiet {
		return
	}
	knn := ""
	if s := prob.KNN.Kernel; s != "" {
		knn = " knn-kernel=" + s
	}
	fmt.Fprintf(sv.stderr, "ssnmf: %s: n=%d k=%d %s tile=%d workers=%d method=%s kernel=%s%s workdir=%s\n",
		c.inputName(), prob.N(), c.run.K, prob.Describe(), c.run.BlockSize, c.run.Workers, c.run.Method, prob.Kernel(), knn, sv.dir)
}

// solved is the error of a solve that ended with err, or was stopped by
// a signal; nil for a run whose outputs are to be written, which notes a
// -max-time reached.
func (sv *solving) solved(ctx context.Context, sr *solver.Run, res *fw.Result, err error) error {
	c, dir := sv.c, sv.dir
	var ck *solver.CheckpointError
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("interrupted: %w", ctx.Err())
	case errors.As(err, new(*cluster.StepError)):
		sv.keep = true
		return stepFailed(err, dir, sr.Checkpointed)
	case errors.As(err, &ck):
		return usagef("-resume: %v", ck.Err)
	case err != nil:
		return err
	case res.Status == fw.Stopped:
		sv.keep = true
		if sr.Checkpointed {
			return fmt.Errorf("stopped by a signal after %d iterations; continue with: ssnmf solve -resume %s", res.Iterations, dir)
		}
		return fmt.Errorf("stopped by a signal after %d iterations (only -method %s saves a checkpoint to resume from)", res.Iterations, checkpointers())
	case res.Status == fw.TimeLimit && sr.Checkpointed:
		sv.keep = true
		fmt.Fprintf(sv.stderr, "ssnmf: -max-time %v reached after %d iterations; the outputs hold the W so far; continue with: ssnmf solve -resume %s -max-time LONGER\n",
			c.run.MaxTime, res.Iterations, dir)
	}
	return nil
}

// finish writes the outputs of a solve that ended in res, the model, and
// marks the checkpoint of a finished run so; then prints the result table.
func (sv *solving) finish(ctx context.Context, sr *solver.Run, res *fw.Result, outs *outputs) error {
	c, ws, prob := sv.c, sr.Workspace, sr.Problem
	w, err := ws.InputOrder(prob.Order)
	if err != nil {
		return err
	}
	sum := sv.rep.sum
	sum.finish(res, time.Since(sv.begin).Seconds(), w)
	if c.run.Model != "" {
		if err := c.saveModel(ctx, sr, sv.stderr); err != nil {
			return err
		}
		c.disk.End("model")
	}
	if err := sum.write(outs, w); err != nil {
		return err
	}
	if err := outs.all().Commit(); err != nil {
		return err
	}
	// Finished means finished: a later -resume says so and rewrites
	// nothing.
	var written map[string]string
	mark := !sv.temp && (sr.Checkpointed || sv.saved != nil)
	if mark && res.Status != fw.TimeLimit {
		if written, err = c.outputPaths(); err != nil {
			return err
		}
	}
	if err := sr.Finish(res, mark, written); err != nil {
		return err
	}
	if !store.WritesStdout(c.out, c.summary, c.trace) {
		return sum.sum.WriteText(sv.stdout)
	}
	return nil
}

// checkClusters refuses k >= n, where a clustering of the n rows is
// pointless (at k = n each row is a cluster of its own), and warns above
// n/2, where at least 2k - n clusters must hold a single row and an
// iteration's k×k products with WᵀW (but for a method that makes its own W from a clustering), about n·k²
// multiply-adds, cost far more than its pass over P. given says whether -k was given, or is the
// number of classes of the label column.
func (c *config) checkClusters(n int, given bool) error {
	k := c.run.K
	of := fmt.Sprintf("-k %d", k)
	if !given {
		of = fmt.Sprintf("k = %d, the number of classes of the label column,", k)
	}
	if k >= n {
		return usagef("%s is not below the %d rows of %s: a clustering needs fewer clusters than rows (at k = n each row is a cluster of its own); give -k %d or less", of, n, c.inputName(), n-1)
	}
	if 2*k > n {
		cost := ""
		if !ownStart(c.run.Method) {
			cost = fmt.Sprintf(", and an iteration costs about n·k² = %.2g multiply-adds (the run may be long)", float64(n)*float64(k)*float64(k))
		}
		c.log(fmt.Sprintf("%s is more than half the %d rows: at least %d clusters hold a single row%s", of, n, 2*k-n, cost))
	}
	return nil
}

// checkSpectral refuses -init spectral and -method spectral on a run
// whose P is not a graph (sparse reports whether it is): the spectral
// embedding is the graph's.
func (c *config) checkSpectral(sparse bool) error {
	info, _ := methods.Lookup(c.run.Method)
	what := "-init spectral"
	switch {
	case sparse:
		return nil
	case info.Graph:
		what = "-method " + info.Name
	case c.run.Init != solver.InitSpectral:
		return nil
	}
	return usagef("%s needs a sparse P, whose graph it embeds (-affinity knn or an edge list); the affinity is %s: use -affinity knn", what, c.scope().affinity)
}

// outputs are the files a run writes; nil fields were not asked for.
type outputs struct {
	out, summary, trace *store.AtomicFile
}

// createOutputs starts writing the outputs; "-" is stdout.
func (c *config) createOutputs(ctx context.Context, stdout io.Writer) (*outputs, error) {
	o := &outputs{}
	for _, f := range []struct {
		flag, path string
		dst        **store.AtomicFile
	}{{"-out", c.out, &o.out}, {"-summary", c.summary, &o.summary}, {"-trace", c.trace, &o.trace}} {
		if f.path == "" {
			continue
		}
		a, err := createOutput(ctx, c.fs(), f.flag, f.path, stdout)
		if err != nil {
			o.all().Abort()
			return nil, err
		}
		*f.dst = a
	}
	return o, nil
}

// inputs are the files a run reads: INPUT and the file of -affinity.
func (kc *kernelConfig) inputs() []store.NamedFile {
	in := []store.NamedFile{{Name: "INPUT", Path: kc.input}}
	if kc.fromFile() {
		in = append(in, store.NamedFile{Name: "-affinity", Path: kc.affinity})
	}
	return in
}

// outputs are the files a run writes, as checkFiles takes them; the
// directory of -model is one.
func (c *config) outputs() []store.NamedFile {
	return []store.NamedFile{{Name: "-out", Path: c.out}, {Name: "-summary", Path: c.summary}, {Name: "-trace", Path: c.trace}, {Name: "-model", Path: c.run.Model}}
}

// all returns the outputs as one set, to commit or abort together.
func (o *outputs) all() store.Outputs { return store.Outputs{o.out, o.summary, o.trace} }

// writeMemberships writes W (n×k) to out in the format of path's
// extension, as -out of solve and predict.
func writeMemberships(out io.Writer, path string, w []float64, n, k int) error {
	if err := input.WriteMemberships(out, path, w, n, k); err != nil {
		return fmt.Errorf("-out %s: %w", path, err)
	}
	return nil
}

func (kc *kernelConfig) inputName() string {
	switch {
	case kc.input != "":
		return kc.input
	case kc.fromFile():
		return kc.affinity
	}
	return builtinName
}

// openWorkdir returns the work directory and whether it is a temporary
// one made here (solver.MakeWorkdir).
func (c *config) openWorkdir() (string, bool, error) {
	dir, temp, err := solver.MakeWorkdir(c.run.Workdir, c.workParent())
	if err != nil && c.run.Workdir != "" {
		err = fmt.Errorf("-workdir: %w", err)
	}
	return dir, temp, err
}

// stepFailed is the error of a run whose step failed for good (a
// cluster.StepError), which keeps its work directory dir: how to go on.
func stepFailed(err error, dir string, checkpointed bool) error {
	if checkpointed {
		return fmt.Errorf("%w; continue from the last checkpoint with: ssnmf solve -resume %s", err, dir)
	}
	return fmt.Errorf("%w; the parts done are kept in %s: run again with -workdir %s to reuse them", err, dir, dir)
}

// stoppedInSetup is the error of a solve stopped by a signal before its
// solver began, which saved no checkpoint; under -engine slurm the steps
// done are kept in the work directory dir for a run again to reuse.
func stoppedInSetup(c *config, dir string) error {
	const msg = "stopped by a signal while setting up P, before the solve began (no checkpoint to resume from)"
	if c.engine == engineSlurm {
		return fmt.Errorf("%s; the parts done are kept in %s: run again with -workdir %s to reuse them", msg, dir, dir)
	}
	return errors.New(msg + "; run again")
}

// stoppedIn reports whether ctx, derived from parent, was canceled by a
// stop while parent was not.
func stoppedIn(ctx, parent context.Context) bool {
	return ctx.Err() != nil && parent.Err() == nil
}
