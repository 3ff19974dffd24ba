package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/cluster"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/internal/diskio"
	"github.com/ssnmf/ssnmf/internal/fault"
	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/store"
)

// problem is the input of a run and the affinity matrix P built from it.
type problem struct {
	// Problem is the input (nil when P comes from a tile file and no
	// INPUT is given) and P.
	solver.Problem
	coord *cluster.Coordinator // -engine slurm's; nil for local
	dir   string               // the work directory
}

// problem loads the input and builds P (solver.Options.Open): the
// Gaussian kernel of the features, their kNN graph (-affinity knn), or the
// tile file or edge list of -affinity. Large inputs are mapped into the
// work directory dir rather than held in memory. progress, if not nil, is
// the tile engine's progress hook. k, for the rules that match P's mass
// to k clusters, is the number of classes of the input's labels if 0.
func (kc *kernelConfig) problem(ctx context.Context, dir string, k int, progress func(pass string, done, total int)) (*problem, error) {
	pr := &problem{dir: dir}
	o := kc.options()
	o.GammaRule, o.K = kc.gamma.rule, k
	if kc.gamma.auto {
		o.GammaRule = defaultRule
	}
	setup := solver.Setup{Dir: dir, Name: kc.inputName(), Scratch: kc.budget.Scratch, Saved: kc.saved, Moments: kc.moments,
		InputRead: func(tab *store.Table) error {
			kc.disk.End("input")
			return kc.checkGamma(o.GammaRule, k, tab)
		}, Progress: progress, Round: kc.knnRound}
	var err error
	if setup.Engine, err = kc.coordinator(pr); err != nil {
		return nil, err
	}
	p, err := o.Open(ctx, kc.source(), setup)
	kc.disk.End("affinity")
	var ie *solver.InputError
	switch {
	case errors.As(err, &ie):
		return nil, usageError{ie.Err}
	case err != nil:
		return nil, kc.buildError(err)
	}
	pr.Problem = *p
	kc.run.BlockSize = pr.BlockSize
	kc.logProblem(pr)
	return pr, nil
}

// checkGamma refuses -gamma mass on the Gaussian kernel with fewer than
// 2 clusters: k, or if 0 the classes of tab's labels.
func (kc *kernelConfig) checkGamma(rule affinity.Rule, k int, tab *store.Table) error {
	k, _ = solver.Options{K: k}.Clusters(tab) // 0 without labels
	if rule == affinity.Mass && kc.gamma.value == 0 && kc.gaussian() && k < 2 {
		return usagef("-gamma mass needs k >= 2 clusters (-k, or a label column with 2 classes or more), have %d", k)
	}
	return nil
}

// buildError is the error of a P that affinity.Build refused: a usage
// error where the flags or the input are at fault, the input's of a
// resumed run among them.
func (kc *kernelConfig) buildError(err error) error {
	var bw *affinity.BandwidthError
	var ck *solver.CheckpointError
	switch {
	case errors.As(err, &ck):
		return usagef("-resume: %v", ck.Err)
	case errors.As(err, &bw):
		return usagef("%v; standardize the features (-standardize) or give -gamma", err)
	case errors.As(err, new(*affinity.RangeError)):
		return usageError{err}
	case kc.fromFile():
		return usagef("-affinity: %v", err)
	}
	return err
}

// logProblem says where P differs from what the flags asked: neighbours
// clamped to the rows, and an approximate kNN search that stopped below
// its recall target.
func (kc *kernelConfig) logProblem(pr *problem) {
	if kc.affinity == affinityKNN && kc.neighborsGiven && kc.run.Neighbors > pr.N() && kc.log != nil {
		kc.log(fmt.Sprintf("-neighbors %d is more than the %d rows: clamped to %d", kc.run.Neighbors, pr.N(), pr.N()))
	}
	if st := pr.KNN; kc.log != nil && st.Method == graph.Approximate && st.RecallRows > 0 && st.Recall < kc.run.KNNRecall {
		kc.log(fmt.Sprintf("warning: the kNN search stopped after %d rounds (-knn-rounds) at sampled recall %.4f, below -knn-recall %v; more -knn-rounds or -knn-probes reach more",
			len(st.Rounds), st.Recall, kc.run.KNNRecall))
	}
}

// coordinator returns the engine of -engine slurm, the coordinator of
// the tasks in the work directory of pr (cluster.NewSrun), which it sets
// in pr; nil for local.
func (kc *kernelConfig) coordinator(pr *problem) (affinity.Engine, error) {
	if kc.engine != engineSlurm {
		return nil, nil
	}
	co, err := cluster.NewSrun(pr.dir, kc.tasks, kc.retries)
	if err != nil {
		return nil, fmt.Errorf("-engine slurm: %w", err)
	}
	co.Log, co.FS, co.Kernel = kc.log, kc.fsys, kc.run.Kernel
	pr.coord = co
	return co, nil
}

// knnRound is the kNN search's hook at the end of each round of the
// approximate search: it ends the round's I/O phase and prints its line.
func (kc *kernelConfig) knnRound(round int, r graph.KNNRound) {
	ph := kc.disk.End(fmt.Sprintf("kNN round %d", round))
	if kc.quiet || kc.log == nil {
		return
	}
	kc.showBudget()
	work := fmt.Sprintf("%d tiles", r.Tiles)
	if r.Parts > 0 {
		work += fmt.Sprintf(" in %d parts", r.Parts)
	}
	if r.Descent {
		work = "neighbour descent"
	}
	if r.Spilled > 0 {
		work += fmt.Sprintf(" (%s set aside)", diskio.Size(r.Spilled))
	}
	io := ""
	if kc.disk.OK() {
		io = fmt.Sprintf(", read %s, wrote %s", diskio.Size(ph.Read), diskio.Size(ph.Written))
	}
	kc.log(fmt.Sprintf("kNN round %d: %s, %.1f%% of the lists changed, sampled recall %.4f, %.1fs%s", round, work, 100*r.Changed, r.Recall, ph.Seconds, io))
}

// showBudget prints the memory budget's line once, before the first
// progress line of the run (none if the run fails before it, whose error
// stays one line).
func (kc *kernelConfig) showBudget() {
	if kc.quiet || kc.log == nil || kc.budgetShown {
		return
	}
	kc.budgetShown = true
	kc.log(kc.budget.String())
}

// fromFile reports whether -affinity names a file of P.
func (kc *kernelConfig) fromFile() bool { return !kc.gaussian() && kc.affinity != affinityKNN }

// gaussian reports whether P is the Gaussian kernel of the features (the
// tiles command leaves -affinity empty).
func (kc *kernelConfig) gaussian() bool { return kc.affinity == "" || kc.affinity == affinityGaussian }

// source is the input of the run: INPUT, the built-in data set, or none
// when P is read from -affinity without INPUT.
func (kc *kernelConfig) source() solver.Input {
	in := solver.Input{Path: kc.input, Format: kc.format, Features: kc.features, Label: kc.label}
	if kc.input == "" && !kc.fromFile() {
		in.CSV, in.Name = bytes.NewReader(builtinCSV), builtinName
	}
	return in
}

// export builds P in a temporary work directory and has write write it (or
// what is made of it) to the file out, which appears, atomically, only if
// write succeeds ("-" is stdout, written directly): the end of the tiles
// and graph commands. An out that is one of the inputs is refused first.
func (kc *kernelConfig) export(ctx context.Context, out string, stdout io.Writer, write func(w io.Writer, prob *problem) error) (err error) {
	if err := checkFiles(kc.inputs(), []store.NamedFile{{Name: "-o", Path: out}}); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(kc.workParent(), "ssnmf-export-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lock, err := lockWorkdir("work directory", dir, "", nil)
	if err != nil {
		return err
	}
	defer lock.Close()
	f, err := createOutput(ctx, kc.fs(), "-o", out, stdout)
	if err != nil {
		return err
	}
	defer f.Abort()
	kc.disk = diskio.Start()
	prob, err := kc.problem(ctx, dir, 0, nil)
	if err != nil {
		return err
	}
	defer prob.Close()
	defer fault.Catch(&err)() // names a fault before the close above unmaps the files
	if err := write(f, prob); err != nil {
		return err
	}
	return f.Commit()
}

// workParent returns the directory in which a temporary work directory is
// made: the system's, or with -engine slurm the current directory, which a
// batch job shares with its nodes, where the node's own is not.
func (kc *kernelConfig) workParent() string {
	if kc.engine == engineSlurm {
		return "."
	}
	return ""
}
