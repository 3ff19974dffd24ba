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
	"strings"
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
	begin := time.Now()
	var saved *savedRun
	if c.resume != "" {
		// Locked before the checkpoint is read: a run still writing it
		// refuses the resume.
		lock, err := lockWorkdir("-resume", c.resume, "wait for it to end before resuming", stderr)
		if err != nil {
			return err
		}
		defer lock.Close()
		if c, saved, err = resumeConfig(c, stdout); err != nil {
			return err
		}
	}
	if err := c.marks.checkApplies(given, c.scope()); err != nil {
		return err
	}
	if s := c.scope(); s.affinity == affinityGaussian || s.affinity == kindTiles {
		if err := c.checkSpectral(false); err != nil {
			return err
		}
	}
	if err := c.resolveKernels(saved, stderr); err != nil {
		return err
	}
	c.neighborsGiven = slices.Contains(given, "neighbors")
	if err := checkFiles(c.inputs(), c.outputs()); err != nil {
		return err
	}
	if err := c.checkModelPaths(); err != nil {
		return err
	}
	c.checkInput = func(uint32, int) error { return nil }
	if saved != nil {
		if done, err := c.finished(saved, given, stderr); done || err != nil {
			return err
		}
		c.checkInput = saved.checkInput
	}
	dir, temp, err := c.openWorkdir()
	if err != nil {
		return err
	}
	keep := false // keep a temporary work directory: the run can be resumed from it
	defer func() {
		if temp && !keep {
			os.RemoveAll(dir)
		}
	}()
	if c.resume == "" {
		var warn io.Writer
		if !temp {
			warn = stderr
		}
		lock, err := lockWorkdir("-workdir", dir, "wait for it to end, or use another -workdir", warn)
		if err != nil {
			return err
		}
		defer lock.Close()
	}

	prog := &progress{out: stderr, quiet: c.quiet}
	c.log = func(msg string) { fmt.Fprintln(stderr, "ssnmf: "+msg) }
	if c.engine == engineSlurm && !c.quiet {
		fmt.Fprintf(stderr, "ssnmf: -engine slurm: %d tasks a step, up to %d retries, run directory %s\n", c.tasks, c.retries, filepath.Join(dir, clusterDir))
	}
	setup := time.Now()
	c.disk = diskio.Start()
	// The set-up saves no checkpoint: a signal ends it at once.
	setupCtx, endSetup := solver.StopContext(ctx, stop)
	defer endSetup()
	prob, err := c.problem(setupCtx, dir, c.k, prog.pass)
	if err != nil && stoppedIn(setupCtx, ctx) {
		keep = c.engine == engineSlurm
		return stoppedInSetup(c, dir)
	}
	if errors.As(err, new(*cluster.StepError)) {
		keep = true
		return stepFailed(err, dir, false)
	} else if err != nil {
		return err
	}
	defer prob.close()
	defer fault.Catch(&err)() // names a fault before the close above unmaps the files
	n, tab := prob.N(), prob.tab
	prog.n, prog.entries = n, prob.Entries()
	info, _ := methods.Lookup(c.method)
	if c.k == 0 {
		if tab == nil || tab.Labels == nil {
			return usagef("-k is required: %s has no label column to take the number of classes from", c.inputName())
		}
		c.k = len(tab.Classes)
	}
	k := c.k
	if c.starts == 0 {
		c.starts = solver.StartsFor(info, prob.Graph() != nil, prob.N())
	}
	if err := c.checkClusters(n, slices.Contains(given, "k")); err != nil {
		return err
	}
	if saved != nil {
		if err := saved.matches(prob); err != nil {
			return usageError{err}
		}
	}
	if err := c.checkScale(prob); err != nil {
		return err
	}
	switch {
	case c.init == initAuto && tab != nil:
		c.init = initKmeans
	case c.init == initAuto:
		c.init = c.start.String()
	case tab == nil && (c.init == initKmeans || info.Features):
		return usagef("-init kmeans and -method kmeans need the features: give the INPUT that -affinity was made from")
	}
	if err := c.checkSpectral(prob.Graph() != nil); err != nil {
		return err
	}
	kernel, m := prob.Kernel(), &solver.Meter{Affinity: prob.Affinity}

	// Open the outputs before the work, so that an unwritable path fails
	// now; they are renamed into place only once all are written.
	outs, err := c.createOutputs(ctx, stdout)
	if err != nil {
		return err
	}
	defer outs.abort()
	var traceOut io.Writer // the trace is kept for checkpoints even without -trace
	if outs.trace != nil {
		traceOut = outs.trace
	}
	rep := &report{progress: prog, trace: trace.NewWriter(traceOut), tracePath: c.trace,
		sum: &summaryBuilder{cfg: c, prob: prob, kernel: kernel, meter: m, warn: stderr, setup: time.Since(setup).Seconds()}}

	ws, err := solver.NewWorkspace(dir, n, k)
	if err != nil {
		return err
	}
	defer ws.Close()
	defer fault.Catch(&err)() // names a fault before the close above unmaps the files
	if saved == nil && !temp {
		had, err := ws.Clear()
		if err != nil {
			return fmt.Errorf("-workdir %s: %w", dir, err)
		}
		if had && !c.quiet {
			fmt.Fprintf(stderr, "ssnmf: -workdir %s: removed the checkpoint of an earlier run: a new run starts clean (ssnmf solve -resume %s goes on from a checkpoint instead)\n", dir, dir)
		}
	}
	sr := &solveRun{cfg: c, info: info, prob: prob, meter: m, ws: ws, rep: rep, stop: stop, saved: saved, begin: begin, bestFile: -1, savedBest: -1}
	if err := sr.scale(setupCtx); err != nil {
		if stoppedIn(setupCtx, ctx) {
			keep = c.engine == engineSlurm
			return stoppedInSetup(c, dir)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w", ctx.Err())
		}
		return err
	}
	c.disk.End("scale")
	c.showBudget()
	if !c.quiet {
		knn := ""
		if s := prob.KNN.Kernel; s != "" {
			knn = " knn-kernel=" + s
		}
		fmt.Fprintf(stderr, "ssnmf: %s: n=%d k=%d %s tile=%d workers=%d method=%s kernel=%s%s workdir=%s\n",
			c.inputName(), n, k, prob.Describe(), c.block, c.workers, c.method, kernel, knn, dir)
	}
	endSetup()
	res, err := sr.solve(ctx)
	c.disk.End("solve")
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("interrupted: %w", ctx.Err())
		case errors.As(err, new(*cluster.StepError)):
			keep = true
			return stepFailed(err, dir, sr.checkpointed)
		}
		return err
	}
	if res.Status == fw.Stopped {
		keep = true
		if sr.checkpointed {
			return fmt.Errorf("stopped by a signal after %d iterations; continue with: ssnmf solve -resume %s", res.Iterations, dir)
		}
		return fmt.Errorf("stopped by a signal after %d iterations (only -method %s saves a checkpoint to resume from)", res.Iterations, checkpointers())
	}
	if res.Status == fw.TimeLimit && sr.checkpointed {
		keep = true
		fmt.Fprintf(stderr, "ssnmf: -max-time %v reached after %d iterations; the outputs hold the W so far; continue with: ssnmf solve -resume %s -max-time LONGER\n",
			c.maxTime, res.Iterations, dir)
	}
	w, err := ws.InputOrder(prob.Order)
	if err != nil {
		return err
	}
	rep.sum.finish(res, time.Since(begin).Seconds(), w)
	if c.model != "" {
		if err := c.saveModel(ctx, prob, ws.W, stderr); err != nil {
			return err
		}
		c.disk.End("model")
	}
	if err := rep.sum.write(outs, w); err != nil {
		return err
	}
	if err := outs.commit(); err != nil {
		return err
	}
	if res.Status != fw.TimeLimit {
		if err := ws.RemoveBest(sr.savedBest); err != nil {
			return err
		}
		// Finished means finished: a later -resume says so and
		// rewrites nothing.
		if !temp && (sr.checkpointed || saved != nil) {
			if err := sr.markFinished(res); err != nil {
				return err
			}
		}
	}
	if !writesStdout(c.out, c.summary, c.trace) {
		rep.sum.table(stdout)
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
	k := c.k
	of := fmt.Sprintf("-k %d", k)
	if !given {
		of = fmt.Sprintf("k = %d, the number of classes of the label column,", k)
	}
	if k >= n {
		return usagef("%s is not below the %d rows of %s: a clustering needs fewer clusters than rows (at k = n each row is a cluster of its own); give -k %d or less", of, n, c.inputName(), n-1)
	}
	if 2*k > n {
		cost := ""
		if !ownStart(c.method) {
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
	info, _ := methods.Lookup(c.method)
	what := "-init spectral"
	switch {
	case sparse:
		return nil
	case info.Graph:
		what = "-method " + info.Name
	case c.init != initSpectral:
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
			o.abort()
			return nil, err
		}
		*f.dst = a
	}
	return o, nil
}

// inputs are the files a run reads: INPUT and the file of -affinity.
func (kc *kernelConfig) inputs() []fileArg {
	in := []fileArg{{"INPUT", kc.input}}
	if kc.fromFile() {
		in = append(in, fileArg{"-affinity", kc.affinity})
	}
	return in
}

// outputs are the files a run writes, as checkFiles takes them; the
// directory of -model is one.
func (c *config) outputs() []fileArg {
	return []fileArg{{"-out", c.out}, {"-summary", c.summary}, {"-trace", c.trace}, {"-model", c.model}}
}

func (o *outputs) files() []*store.AtomicFile {
	var fs []*store.AtomicFile
	for _, a := range []*store.AtomicFile{o.out, o.summary, o.trace} {
		if a != nil {
			fs = append(fs, a)
		}
	}
	return fs
}

// commit renames every output into place.
func (o *outputs) commit() error {
	for _, a := range o.files() {
		if err := a.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// abort removes the outputs not yet committed.
func (o *outputs) abort() {
	for _, a := range o.files() {
		a.Abort()
	}
}

// outFormat returns the format of a membership file or an edge list by
// its extension: "csv", "arrow", "parquet", or "" if unknown; "csv" for an
// output written in place (/dev/null, a terminal, a named pipe) whose name
// has none of them.
func outFormat(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return input.CSV
	case ".arrow":
		return input.Arrow
	case ".parquet":
		return input.Parquet
	}
	if store.WrittenInPlace(path) {
		return input.CSV
	}
	return ""
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
// one made here.
func (c *config) openWorkdir() (string, bool, error) {
	if c.workdir != "" {
		if err := os.MkdirAll(c.workdir, 0o755); err != nil {
			return "", false, fmt.Errorf("-workdir: %w", err)
		}
		return c.workdir, false, nil
	}
	dir, err := os.MkdirTemp(c.workParent(), "ssnmf-")
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		return "", false, fmt.Errorf("work directory: %w", err)
	}
	return dir, true, nil
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
