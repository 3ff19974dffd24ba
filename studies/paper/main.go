// Command paper reproduces the experiment of Section 5 of Zhao & Gordon,
// "Frank-Wolfe Optimization for Symmetric-NMF under Simplicial Constraint":
// Frank-Wolfe, projected gradient descent and the SOF penalty method from
// the same initial point on blood (k = 10), yeast (k = 10), satimage (k = 6)
// and pendigits (k = 100), with the Gaussian kernel of bandwidth 1 and the
// paper's stopping rule (objective change below 1e-3, at most 50 outer
// iterations). It prints a table per feature scaling (standardized, and raw
// as the paper may have used them), and writes the traces, the tables and
// the paper's Fig. 2 and Fig. 3 (PNG and SVG) into the output directory.
//
// Usage, from the repository root:
//
//	go run ./studies/paper [-data ../shared/data] [-o paper-out] [-sets blood,yeast,satimage,pendigits] [-scalings standardized,raw]
//
// The data are loaded as "ssnmf solve" loads them (store.ReadCSV and
// affinity.Build), every method comes from the table of package methods,
// and every method starts from fw.Initialize with the same seed.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/figure"
	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/methods"
	"github.com/ssnmf/ssnmf/score"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/studies/internal/experiment"
	"github.com/ssnmf/ssnmf/tile"
)

// paperSets are the data sets of the paper's Table 1 and their k.
var paperSets = []experiment.Set{{Name: "blood", K: 10}, {Name: "yeast", K: 10}, {Name: "satimage", K: 6}, {Name: "pendigits", K: 100}}

// variants are the runs of a data set in the order of the table, each a
// method of the table of methods with its parameters; the figures show fw,
// pgd and penalty.
var variants = []struct {
	name, method string
	params       methods.Params
}{
	{name: "fw", method: "fw", params: methods.Params{Step: fw.StepExact}},
	{name: "fw-curvature", method: "fw", params: methods.Params{Step: fw.StepCurvature}},
	{name: "pgd", method: "pgd"},
	{name: "penalty", method: "penalty"},
}

type config struct {
	data, out         string
	sets              []experiment.Set
	scalings          []string
	seed              uint64
	workers, block    int
	ftol, tol         float64
	maxIter           int
	penaltyMaxPasses  int
	penaltyMaxPassesN int // apply the budget only when n >= this
}

// run is one method's run on one data set.
type run struct {
	set     experiment.Set
	scaling string
	n       int
	method  string
	res     *fw.Result
	pen     *fw.PenaltyReport // penalty only
	trace   []fw.Iteration
	scores  score.Scores
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := mainErr(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "paper: %v\n", err)
		os.Exit(1)
	}
}

func mainErr(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := &config{}
	fs := flag.NewFlagSet("paper", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.data, "data", "../shared/data", "directory of the data sets (blood.csv, yeast.csv, satimage.csv, pendigits.csv)")
	fs.StringVar(&c.out, "o", "paper-out", "output directory for traces, tables and figures")
	sets := fs.String("sets", "blood,yeast,satimage,pendigits", "data sets to run, comma-separated, each optionally name:k")
	scalingFlag := fs.String("scalings", "standardized,raw", "feature scalings to run, a table each: standardized (z-scores) and/or raw")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of the common initial point")
	fs.IntVar(&c.workers, "workers", runtime.GOMAXPROCS(0), "goroutines for the passes")
	fs.IntVar(&c.block, "tile", tile.DefaultBlockSize, "tile edge")
	fs.Float64Var(&c.ftol, "ftol", 1e-3, "stop when the objective changes by less than this (the paper's rule)")
	fs.Float64Var(&c.tol, "tol", 1e-6, "stop when the Frank-Wolfe gap is <= this")
	fs.IntVar(&c.maxIter, "max-iter", 50, "at most this many (outer) iterations (the paper's rule)")
	fs.IntVar(&c.penaltyMaxPasses, "penalty-max-passes", 100, "tile-pass budget of the penalty method on large data sets (0: none)")
	fs.IntVar(&c.penaltyMaxPassesN, "penalty-budget-n", 4000, "apply -penalty-max-passes to data sets of at least this many rows")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	var err error
	if c.sets, err = experiment.ParseSets(*sets, paperSets); err != nil {
		return fmt.Errorf("-sets: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(c.out, "traces"), 0o755); err != nil {
		return err
	}
	begin := time.Now()
	for sc := range strings.SplitSeq(*scalingFlag, ",") {
		if sc != "standardized" && sc != "raw" {
			return fmt.Errorf("-scalings: %q is neither standardized nor raw", sc)
		}
		c.scalings = append(c.scalings, sc)
	}
	for _, scaling := range c.scalings {
		var runs []*run
		title := fmt.Sprintf("Features %s, gamma = 1, seed %d, -ftol %g -max-iter %d, %d workers", scaling, c.seed, c.ftol, c.maxIter, c.workers)
		for i, ds := range c.sets {
			rs, err := c.runSet(ctx, ds, scaling, stderr)
			if err != nil {
				return err
			}
			runs = append(runs, rs...)
			// Write the table and figures after every data set, so that
			// an interrupted run keeps what it has done.
			if err := store.WriteFileAtomic(filepath.Join(c.out, "table-"+scaling+".md"), func(w io.Writer) error {
				fmt.Fprintf(w, "%s\n\n", title)
				writeTable(w, runs)
				return nil
			}); err != nil {
				return err
			}
			if err := c.figures(c.sets[:i+1], runs, scaling); err != nil {
				return err
			}
		}
		fmt.Fprintf(stdout, "\n## %s\n\n", title)
		writeTable(stdout, runs)
	}
	fmt.Fprintf(stdout, "\ntotal %.0fs\n", time.Since(begin).Seconds())
	return nil
}

// runSet loads one data set and runs every method on it from the same start.
func (c *config) runSet(ctx context.Context, ds experiment.Set, scaling string, log io.Writer) ([]*run, error) {
	path := experiment.Path(c.data, ds.Name)
	tab, err := experiment.ReadLabeled(path)
	if err != nil {
		return nil, err
	}
	n, k := tab.N, ds.K
	aff, err := affinity.Build(ctx, tab, affinity.Spec{Gamma: 1, Standardize: scaling == "standardized",
		BlockSize: c.block, Workers: c.workers, Name: path})
	if err != nil {
		return nil, err
	}
	defer aff.Close()
	prob := fw.Problem{P: aff, K: k}
	w0 := make([]float64, n*k)
	if err := fw.Initialize(w0, k, fw.StartRandom, c.seed); err != nil {
		return nil, err
	}
	var runs []*run
	for _, v := range variants {
		m := v.name
		r := &run{set: ds, scaling: scaling, n: n, method: m}
		w := make([]float64, n*k)
		copy(w, w0)
		set := methods.Settings(c.tol, c.ftol, c.maxIter, 100)
		set.Workers = c.workers
		set.Recorder = func(it fw.Iteration) error { r.trace = append(r.trace, it); return nil }
		if v.method == "penalty" && n >= c.penaltyMaxPassesN {
			set.MaxPasses = c.penaltyMaxPasses
		}
		fmt.Fprintf(log, "paper: %s %s (n=%d, k=%d): %s ...\n", ds.Name, scaling, n, k, m)
		info, err := methods.Lookup(v.method)
		if err != nil {
			return nil, err
		}
		meth := info.New(v.params)
		r.res, err = fw.Minimize(ctx, prob, w, &set, meth)
		if pen, ok := meth.(*fw.Penalty); ok && err == nil {
			rep := pen.Report()
			r.pen = &rep
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s %s: %w", ds.Name, scaling, m, err)
		}
		if r.scores, err = score.Compare(tab.Labels, experiment.Clusters(w, k)); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "paper:   %s: %d iterations, %d passes, %.1fs, f %.8g, gap %.4g (%v)\n",
			m, r.res.Iterations, r.res.Passes, r.res.Runtime.Seconds(), r.res.Objective, r.res.Gap, r.res.Status)
		tracePath := filepath.Join(c.out, "traces", fmt.Sprintf("%s-%s-%s.csv", ds.Name, scaling, m))
		if err := experiment.WriteTrace(tracePath, r.trace); err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

func writeTable(out io.Writer, runs []*run) {
	tw := tabwriter.NewWriter(out, 0, 0, 1, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "data set\tn\tk\tmethod\titers\tpasses\tseconds\tobjective\tFW gap\tstop\tmax|row sum-1|\tmin entry\tprojected f\tARI\tNMI\taccuracy\t")
	for _, r := range runs {
		feas, minEntry, proj := "0", "0", "-"
		if r.pen != nil {
			feas = fmt.Sprintf("%.2e", r.pen.MaxRowSumError)
			minEntry = fmt.Sprintf("%.2e", r.pen.MinEntry)
			proj = fmt.Sprintf("%.8g", r.pen.ProjectedObjective)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%d\t%.2f\t%.8g\t%.4g\t%v\t%s\t%s\t%s\t%.4f\t%.4f\t%.4f\t\n",
			r.set.Name, r.n, r.set.K, r.method, r.res.Iterations, r.res.Passes, r.res.Runtime.Seconds(),
			r.res.Objective, r.res.Gap, r.res.Status, feas, minEntry, proj, r.scores.ARI, r.scores.NMI, r.scores.Accuracy)
	}
	tw.Flush()
}

// figures draws Fig. 2 (log seconds against log f, three methods) and
// Fig. 3 (log seconds against log(f - f*), FW and PGD), one panel per data
// set, as PNG and SVG.
func (c *config) figures(sets []experiment.Set, runs []*run, scaling string) error {
	suffix := ""
	if scaling != "standardized" {
		suffix = "-" + scaling
	}
	var fig2, fig3 figure.Figure
	for _, ds := range sets {
		p2 := figure.Panel{Title: fmt.Sprintf("%s (k = %d)", ds.Name, ds.K), XLabel: "seconds", YLabel: "objective f", LogX: true, LogY: true}
		p3 := figure.Panel{Title: p2.Title, XLabel: "seconds", YLabel: "f - f* (f* = the method's best)", LogX: true, LogY: true}
		for _, r := range runs {
			if r.set != ds || r.method == "fw-curvature" {
				continue
			}
			s := series(r)
			p2.Series = append(p2.Series, s)
			if r.method != "penalty" {
				best := math.Inf(1)
				for _, y := range s.Y {
					best = min(best, y)
				}
				ex := figure.Series{Label: s.Label, X: s.X, Y: make([]float64, len(s.Y))}
				for i, y := range s.Y {
					ex.Y[i] = y - best
				}
				p3.Series = append(p3.Series, ex)
			}
		}
		fig2.Panels = append(fig2.Panels, p2)
		fig3.Panels = append(fig3.Panels, p3)
	}
	fig2.Cols, fig3.Cols = min(2, len(sets)), min(2, len(sets))
	for _, f := range []struct {
		fig  *figure.Figure
		name string
	}{{&fig2, "fig2"}, {&fig3, "fig3"}} {
		for _, ext := range []string{".png", ".svg"} {
			if err := f.fig.Save(filepath.Join(c.out, f.name+suffix+ext)); err != nil {
				return err
			}
		}
	}
	return nil
}

// series is a run's objective against its elapsed seconds.
func series(r *run) figure.Series {
	s := figure.Series{Label: r.method}
	for _, it := range r.trace {
		s.X = append(s.X, it.Elapsed.Seconds())
		s.Y = append(s.Y, it.Objective)
	}
	return s
}
