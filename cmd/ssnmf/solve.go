package main

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
)

// builtinCSV is the UCI yeast data set (Nakai; CC BY 4.0): 1,484 proteins,
// 8 features, 10 localization classes; data/README.md gives its source.
//
//go:embed data/yeast.csv
var builtinCSV []byte

const builtinName = "yeast.csv (built in)"

// errHelp reports that -h was given and the usage printed.
var errHelp = errors.New("help requested")

// parseFlags parses args, allowing flags after positional arguments (as in
// "ssnmf solve data.csv -k 10"), and returns the positional arguments. A bad
// flag is a one-line usage error; -h prints the usage on stdout and returns
// errHelp.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(stdout)
				fs.Usage()
				return nil, errHelp
			}
			return nil, usagef("%v (run \"%s -h\" for the flags)", err, fs.Name())
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// gammaFlag is -gamma: a positive number, or "auto" for the median heuristic.
type gammaFlag struct {
	auto  bool
	value float64
}

func (g *gammaFlag) String() string {
	if g.auto {
		return "auto"
	}
	return strconv.FormatFloat(g.value, 'g', -1, 64)
}

func (g *gammaFlag) Set(s string) error {
	if s == "auto" {
		g.auto = true
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("want a positive number or auto, have %q", s)
	}
	g.auto, g.value = false, v
	return nil
}

// config is the parsed command line of solve.
type config struct {
	input       string // "" for the built-in data set
	k           int
	gamma       gammaFlag
	standardize bool
	block       int
	workers     int
	workdir     string
	step        fw.StepRule
	start       fw.Start
	tol, ftol   float64
	maxIter     int
	refresh     int
	seed        uint64
	features    []string
	label       string
	out         string
	summary     string
	trace       string
	quiet       bool
}

func parseSolve(args []string, stdout io.Writer) (*config, error) {
	c := &config{gamma: gammaFlag{auto: true}}
	fs := flag.NewFlagSet("ssnmf solve", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ssnmf solve [flags] [INPUT.csv | INPUT.csv.gz]\n\n"+
			"Clusters the rows of INPUT (the built-in yeast data set if none) into k soft clusters\n"+
			"by Frank-Wolfe on min 1/4 ||P - W Wᵀ||² over row-stochastic W >= 0, where\n"+
			"P_ij = exp(-gamma ||x_i - x_j||²).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.IntVar(&c.k, "k", 0, "number of clusters (default: the number of classes in the label column)")
	fs.Var(&c.gamma, "gamma", "kernel bandwidth `G` > 0, or auto: 1/median of squared distances over 20,000 seeded random pairs of distinct rows")
	fs.BoolVar(&c.standardize, "standardize", false, "z-score each feature (population std; a constant feature becomes 0)")
	fs.IntVar(&c.block, "tile", tile.DefaultBlockSize, "tile edge `B`: P is produced in B×B tiles (at most n; each worker holds about 2 tiles of 8·B² bytes)")
	fs.IntVar(&c.workers, "workers", runtime.GOMAXPROCS(0), "goroutines for the tile and row passes (the default is GOMAXPROCS)")
	fs.StringVar(&c.workdir, "workdir", "", "`DIR` for the memory-mapped W, P·W and P·S files (default: a temporary directory, removed at the end)")
	step := fs.String("step", "exact", "step rule: exact (quartic line search), curvature (the paper's min(g/C, 1)) or open-loop (2/(t+2))")
	start := fs.String("init", "random", "initial point: random (uniform rows, normalized) or corners (random one-hot rows)")
	fs.Float64Var(&c.tol, "tol", 1e-6, "stop when the Frank-Wolfe gap is <= this")
	fs.Float64Var(&c.ftol, "ftol", 0, "stop when the objective changes by less than this between iterations (0: off)")
	fs.IntVar(&c.maxIter, "max-iter", 1000, "stop after this many iterations")
	fs.IntVar(&c.refresh, "refresh", 100, "recompute P·W by a full pass every this many iterations (0: only at the end)")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of the initial point and of the gamma sample")
	features := fs.String("features", "", "comma-separated feature columns (default: every column but the label)")
	fs.StringVar(&c.label, "label", "", "ground-truth column, never a feature (default: \"label\" if present)")
	fs.StringVar(&c.out, "out", "", "write memberships to `FILE.csv` or FILE.arrow (Arrow IPC file): w1..wk, cluster")
	fs.StringVar(&c.summary, "summary", "", "write the run summary to `FILE.json`")
	fs.StringVar(&c.trace, "trace", "", "write one row per iteration to `FILE.csv`")
	fs.BoolVar(&c.quiet, "q", false, "no progress on stderr")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return nil, err
	}
	if c.step, err = fw.ParseStepRule(*step); err != nil {
		return nil, usagef("-step: %v", err)
	}
	if c.start, err = fw.ParseStart(*start); err != nil {
		return nil, usagef("-init: %v", err)
	}
	if *features != "" {
		for f := range strings.SplitSeq(*features, ",") {
			c.features = append(c.features, strings.TrimSpace(f))
		}
	}
	switch {
	case len(pos) > 1:
		return nil, usagef("solve takes at most one INPUT, have %d: %s", len(pos), strings.Join(pos, " "))
	case c.block < 1:
		return nil, usagef("-tile must be >= 1, have %d", c.block)
	case c.workers < 1:
		return nil, usagef("-workers must be >= 1, have %d", c.workers)
	case !(c.tol >= 0):
		return nil, usagef("-tol must be >= 0, have %v", c.tol)
	case !(c.ftol >= 0):
		return nil, usagef("-ftol must be >= 0, have %v", c.ftol)
	case c.maxIter < 0:
		return nil, usagef("-max-iter must be >= 0, have %d", c.maxIter)
	case c.refresh < 0:
		return nil, usagef("-refresh must be >= 0, have %d", c.refresh)
	case c.out != "" && outFormat(c.out) == "":
		return nil, usagef("-out %s: unknown extension, want .csv or .arrow", c.out)
	}
	if len(pos) == 1 {
		c.input = pos[0]
	}
	kSet := false // -k 0 is an error; no -k means "the number of classes"
	fs.Visit(func(f *flag.Flag) { kSet = kSet || f.Name == "k" })
	if kSet && c.k < 1 {
		return nil, usagef("-k must be >= 1, have %d", c.k)
	}
	return c, nil
}

// solve is the solve command.
func solve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseSolve(args, stdout)
	if err != nil {
		return err
	}
	begin := time.Now()
	tab, err := c.load()
	if err != nil {
		return usageError{err}
	}
	n := tab.N
	if c.k == 0 {
		if tab.Labels == nil {
			return usagef("-k is required: %s has no label column to take the number of classes from", c.inputName())
		}
		c.k = len(tab.Classes)
	}
	k := c.k
	if k > n {
		return usagef("-k %d is larger than the number of rows of %s (%d)", k, c.inputName(), n)
	}
	c.block = min(c.block, n)
	if c.standardize {
		tile.Standardize(tab.Features, n, tab.P)
	}
	rep := &report{cfg: c, tab: tab, out: stderr, n: n, gamma: c.gamma.value, gammaRule: "given"}
	if c.gamma.auto {
		g, err := tile.MedianGamma(tab.Features, n, tab.P, tile.DefaultGammaPairs, c.seed)
		if err != nil {
			return usagef("%s: %v; standardize the features (-standardize) or give -gamma", c.inputName(), err)
		}
		rep.gamma, rep.gammaRule = g, "median"
		if g == 0 {
			rep.gamma, rep.gammaRule = 1, "median: no two distinct rows sampled, 1 used"
		}
	}
	src, err := tile.NewGaussian(tab.Features, n, tab.P, rep.gamma)
	if err != nil {
		return err
	}
	eng := &tile.Engine{Source: src, BlockSize: c.block, Workers: c.workers, Progress: rep.passProgress}

	// Open the outputs before the work, so that an unwritable path fails
	// now; they are renamed into place only once all are written.
	outs, err := c.createOutputs()
	if err != nil {
		return usageError{err}
	}
	defer outs.abort()
	if outs.trace != nil {
		rep.trace = outs.trace
	}

	dir, cleanup, err := c.openWorkdir()
	if err != nil {
		return err
	}
	defer cleanup()
	var mats []*store.Matrix
	defer func() {
		for _, m := range mats {
			m.Close()
		}
	}()
	newMat := func(name string) ([]float64, error) {
		m, err := store.CreateMatrix(filepath.Join(dir, name), n, k)
		if err != nil {
			return nil, err
		}
		mats = append(mats, m)
		return m.Data(), nil
	}
	w, err := newMat("W.mat")
	if err != nil {
		return err
	}
	set := fw.Settings{Step: c.step, GapTol: c.tol, FuncTol: c.ftol, MaxIter: c.maxIter,
		Refresh: c.refresh, Workers: c.workers, Recorder: rep.record}
	if set.PW, err = newMat("PW.mat"); err != nil {
		return err
	}
	if set.PS, err = newMat("PS.mat"); err != nil {
		return err
	}
	if err := fw.Initialize(w, k, c.start, c.seed); err != nil {
		return err
	}

	if !c.quiet {
		fmt.Fprintf(stderr, "ssnmf: %s: n=%d p=%d k=%d gamma=%.6g (%s) tile=%d workers=%d step=%v workdir=%s\n",
			c.inputName(), n, tab.P, k, rep.gamma, rep.gammaRule, c.block, c.workers, c.step, dir)
	}
	res, err := fw.Minimize(ctx, fw.Problem{P: eng, K: k}, w, &set)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted after %d iterations", res.Iterations)
		}
		return err
	}
	rep.res = res
	rep.seconds = time.Since(begin).Seconds()
	rep.finish(w)
	if err := rep.write(outs, w); err != nil {
		return err
	}
	if err := outs.commit(); err != nil {
		return err
	}
	rep.table(stdout, w)
	return nil
}

// outputs are the files a run writes; nil fields were not asked for.
type outputs struct {
	out, summary, trace *store.AtomicFile
}

func (c *config) createOutputs() (*outputs, error) {
	o := &outputs{}
	for _, f := range []struct {
		flag, path string
		dst        **store.AtomicFile
	}{{"-out", c.out, &o.out}, {"-summary", c.summary, &o.summary}, {"-trace", c.trace, &o.trace}} {
		if f.path == "" {
			continue
		}
		a, err := store.CreateAtomic(f.path)
		if err != nil {
			o.abort()
			return nil, fmt.Errorf("%s: %w", f.flag, err)
		}
		*f.dst = a
	}
	return o, nil
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

// outFormat returns the format of a membership file by its extension:
// "csv", "arrow", or "" if unknown.
func outFormat(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return "csv"
	case ".arrow":
		return "arrow"
	}
	return ""
}

func (c *config) inputName() string {
	if c.input == "" {
		return builtinName
	}
	return c.input
}

func (c *config) load() (*store.Table, error) {
	opt := store.CSVOptions{Features: c.features, Label: c.label}
	if c.input == "" {
		return store.ParseCSV(bytes.NewReader(builtinCSV), builtinName, opt)
	}
	return store.ReadCSV(c.input, opt)
}

// openWorkdir returns the work directory and a function that removes it if
// it was made here.
func (c *config) openWorkdir() (string, func(), error) {
	if c.workdir != "" {
		if err := os.MkdirAll(c.workdir, 0o755); err != nil {
			return "", nil, fmt.Errorf("-workdir: %w", err)
		}
		return c.workdir, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "ssnmf-")
	if err != nil {
		return "", nil, fmt.Errorf("work directory: %w", err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}
