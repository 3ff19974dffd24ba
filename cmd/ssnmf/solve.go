package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ssnmf/ssnmf/methods"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
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
