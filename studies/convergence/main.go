// Command convergence measures how fast each method approaches the optimum:
// Frank-Wolfe (exact line search), projected gradient descent and row-wise
// pairwise coordinate descent (rowcd), from the same random start on blood,
// yeast, satimage and pendigits, for each of several seeds. For each data set and seed it takes
// the best objective any run found, and prints the tile passes and seconds
// each method needed to come within 0.1% and within 0.01% of it, and which
// method was fastest to 0.01%; it writes the table, one trace CSV per run
// (the format of "ssnmf solve -trace", package trace)
// and a figure of the relative excess (f - best)/best against passes and
// against seconds for the first seed (PNG).
//
// Usage, from the repository root:
//
//	GOEXPERIMENT=simd go run ./studies/convergence [-data ../shared/data] [-o convergence-out]
//	    [-sets blood,yeast,satimage,pendigits] [-seeds 0,1] [-gamma auto|median|G] [-precision float64]
//	    [-fw-passes 1000] [-pgd-passes 600] [-rowcd-passes 150] [-time-limit 90s]
//
// The features are standardized; gamma is tile.AutoBandwidth's by default
// (the median heuristic tile.MedianGamma with -gamma median, or a number).
// Every method gets the same affinity (tile.Engine over tile.Gaussian, whose
// Tile gives rowcd its strips) and the same workers. A run stops
// at its pass budget or its time limit, whichever comes first; the machine
// load at the start is printed with the table, because the seconds depend
// on it.
//
// With -per-pass N it only times three Frank-Wolfe iterations and three
// rowcd sweeps (strip and two-pass schedules) on a seeded Gaussian mixture
// of N points (p = 8, k = 10):
//
//	go run ./studies/convergence -per-pass 20000
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/figure"
	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/methods"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/studies/internal/experiment"
	"github.com/ssnmf/ssnmf/tile"
)

// defaultSets are the data sets of the study and their k, the number of
// classes.
var defaultSets = []experiment.Set{{Name: "blood", K: 10}, {Name: "yeast", K: 10}, {Name: "satimage", K: 6}, {Name: "pendigits", K: 10}}

var compared = []string{"fw", "pgd", "rowcd"}

// targets are the relative distances to the best objective that the table
// reports.
var targets = []float64{1e-3, 1e-4}

type config struct {
	data, out   string
	sets        []experiment.Set
	gamma       string
	seed        uint64 // of the bandwidth sample: the first of seeds
	seeds       []uint64
	precision   tile.Precision
	workers     int
	block       int
	fwPasses    int
	pgdPasses   int
	rowcdPasses int
	moves       int
	timeLimit   time.Duration
}

// run is one method's run on one data set.
type run struct {
	set     experiment.Set
	seed    uint64
	n       int
	gamma   float64
	method  string
	res     *fw.Result
	trace   []fw.Iteration // a record per iterate
	stopped string         // why the run ended
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := mainErr(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "convergence:", err)
		os.Exit(1)
	}
}

func mainErr(ctx context.Context, args []string, stdout io.Writer) error {
	c := config{}
	fs := flag.NewFlagSet("convergence", flag.ContinueOnError)
	fs.StringVar(&c.data, "data", "../shared/data", "directory of the data sets")
	fs.StringVar(&c.out, "o", "convergence-out", "output directory")
	sets := fs.String("sets", "blood,yeast,satimage,pendigits", "data sets, as name or name:k")
	fs.StringVar(&c.gamma, "gamma", "auto", "auto (tile.AutoBandwidth), median (tile.MedianGamma) or a number")
	seeds := fs.String("seeds", "0,1", "seeds of the random starts, comma-separated (the bandwidth sample uses the first)")
	prec := fs.String("precision", "float64", "kernel values: float64 or float32")
	fs.IntVar(&c.workers, "workers", runtime.GOMAXPROCS(0), "goroutines")
	fs.IntVar(&c.block, "tile", tile.DefaultBlockSize, "tile edge, and rows of a row-CD strip")
	fs.IntVar(&c.fwPasses, "fw-passes", 1000, "pass budget of Frank-Wolfe")
	fs.IntVar(&c.pgdPasses, "pgd-passes", 600, "pass budget of projected gradient")
	fs.IntVar(&c.rowcdPasses, "rowcd-passes", 150, "pass budget of rowcd")
	fs.IntVar(&c.moves, "moves", 3, "row-CD moves a row visit")
	fs.DurationVar(&c.timeLimit, "time-limit", 90*time.Second, "time limit of a run")
	perPass := fs.Int("per-pass", 0, "if > 0, only time FW iterations and row-CD sweeps on a Gaussian mixture of this many points (p = 8, k = 10)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if c.precision, err = tile.ParsePrecision(*prec); err != nil {
		return err
	}
	for _, s := range strings.Split(*seeds, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return fmt.Errorf("-seeds: %q is not a seed", s)
		}
		c.seeds = append(c.seeds, v)
	}
	c.seed = c.seeds[0]
	if *perPass > 0 {
		return c.timePasses(ctx, *perPass, stdout)
	}
	if c.sets, err = experiment.ParseSets(*sets, defaultSets); err != nil {
		return fmt.Errorf("-sets: %w", err)
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	load, _ := os.ReadFile("/proc/loadavg")
	header := fmt.Sprintf("# %s, GOMAXPROCS %d, workers %d, load average at start: %s", time.Now().UTC().Format(time.RFC3339),
		runtime.GOMAXPROCS(0), c.workers, strings.TrimSpace(string(load)))
	var all [][]*run
	var first [][]*run // the first seed's runs, for the figure
	for _, ds := range c.sets {
		for si, seed := range c.seeds {
			runs, err := c.runSet(ctx, ds, seed)
			if err != nil {
				return fmt.Errorf("%s: %w", ds.Name, err)
			}
			all = append(all, runs)
			if si == 0 {
				first = append(first, runs)
			}
			// Write after every run, so that an interrupted study keeps
			// what it has.
			var tab strings.Builder
			fmt.Fprintln(&tab, header)
			writeTable(&tab, all)
			if err := writeString(filepath.Join(c.out, "table.txt"), tab.String()); err != nil {
				return err
			}
			if err := writeFigure(filepath.Join(c.out, "convergence.png"), first); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(stdout, header)
	writeTable(stdout, all)
	return nil
}

// errTime and errPasses end a run at its time limit or its pass budget.
var (
	errTime   = errors.New("time limit")
	errPasses = errors.New("pass budget")
)

func (c *config) runSet(ctx context.Context, ds experiment.Set, seed uint64) ([]*run, error) {
	tab, err := store.ReadCSV(experiment.Path(c.data, ds.Name), store.CSVOptions{})
	if err != nil {
		return nil, err
	}
	defer tab.Close()
	n := tab.N
	aff, err := c.affinity(ctx, tab, ds.Name)
	if err != nil {
		return nil, err
	}
	defer aff.Close()
	gamma := aff.Gamma
	w0 := make([]float64, n*ds.K)
	if err := fw.Initialize(w0, ds.K, fw.StartRandom, seed); err != nil {
		return nil, err
	}
	var runs []*run
	for _, m := range compared {
		r := &run{set: ds, seed: seed, n: n, gamma: gamma, method: m}
		w := append([]float64(nil), w0...)
		limit := time.Now().Add(c.timeLimit)
		budget := map[string]int{"fw": c.fwPasses, "pgd": c.pgdPasses, "rowcd": c.rowcdPasses}[m]
		rec := func(it fw.Iteration) error {
			r.trace = append(r.trace, it)
			if it.Final {
				return nil
			}
			if time.Now().After(limit) {
				return errTime
			}
			if it.Passes >= budget {
				return errPasses
			}
			return nil
		}
		info, err := methods.Lookup(m)
		if err != nil {
			return nil, err
		}
		tol := 0.0 // run to the budget
		if m == "rowcd" {
			tol = 1e-9
		}
		set := methods.Settings(tol, 0, math.MaxInt32, fw.DefaultRefresh)
		set.Workers, set.Recorder = c.workers, rec
		r.res, err = fw.Minimize(ctx, fw.Problem{P: aff, K: ds.K}, w, &set,
			info.New(methods.Params{Moves: c.moves, BlockSize: c.block}))
		switch {
		case errors.Is(err, errTime):
			r.stopped, err = "time limit", nil
		case errors.Is(err, errPasses):
			r.stopped, err = "pass budget", nil
		case err == nil:
			r.stopped = r.res.Status.String()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		if r.stopped != "time limit" && r.stopped != "pass budget" {
			// The method's final record has the objective of a pass at the
			// returned W; a run stopped by the recorder ends at its last record.
			last := &r.trace[len(r.trace)-1]
			last.Passes, last.Elapsed = r.res.Passes, r.res.Runtime
		}
		if err := experiment.WriteTrace(filepath.Join(c.out, fmt.Sprintf("%s-seed%d-%s.csv", ds.Name, seed, m)), r.trace); err != nil {
			return nil, err
		}
		last := r.trace[len(r.trace)-1]
		fmt.Fprintf(os.Stderr, "%s seed %d %s: f %.10g after %d passes, %.1fs (%s)\n", ds.Name, seed, m, last.Objective, last.Passes, last.Elapsed.Seconds(), r.stopped)
		runs = append(runs, r)
	}
	return runs, nil
}

// affinity builds the Gaussian kernel of tab's standardized features with
// the bandwidth of -gamma.
func (c *config) affinity(ctx context.Context, tab *store.Table, name string) (*affinity.Built, error) {
	spec := affinity.Spec{Standardize: true, Precision: c.precision, BlockSize: c.block, Workers: c.workers, Seed: c.seed, Name: name}
	switch c.gamma {
	case "auto":
	case "median":
		tile.Standardize(tab.Features, tab.N, tab.P)
		g, err := tile.MedianGamma(tab.Features, tab.N, tab.P, tile.DefaultGammaPairs, c.seed)
		if err != nil {
			return nil, err
		}
		if g == 0 {
			g = 1
		}
		spec.Gamma, spec.Standardize = g, false
	default:
		g, err := strconv.ParseFloat(c.gamma, 64)
		if err != nil || !(g > 0) || math.IsInf(g, 0) {
			return nil, fmt.Errorf("-gamma %q: want auto, median or a positive number", c.gamma)
		}
		spec.Gamma = g
	}
	return affinity.Build(ctx, tab, spec)
}

// best returns the smallest objective any run of a data set recorded.
func best(runs []*run) float64 {
	b := math.Inf(1)
	for _, r := range runs {
		for _, pt := range r.trace {
			b = min(b, pt.Objective)
		}
	}
	return b
}

// reach returns the first record within rel of the best objective.
func reach(r *run, fbest, rel float64) (fw.Iteration, bool) {
	for _, pt := range r.trace {
		if pt.Objective <= fbest*(1+rel) {
			return pt, true
		}
	}
	return fw.Iteration{}, false
}

func writeTable(w io.Writer, all [][]*run) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "set\tn\tk\tgamma\tseed\tmethod\tpasses 0.1%\ts 0.1%\tpasses 0.01%\ts 0.01%\tfinal f\t(f-best)/best\tpasses\ts\tstop\t")
	var wins []string
	for _, runs := range all {
		fb := best(runs)
		win, winT := "none", math.Inf(1)
		for _, r := range runs {
			if pt, ok := reach(r, fb, targets[len(targets)-1]); ok && pt.Elapsed.Seconds() < winT {
				win, winT = r.method, pt.Elapsed.Seconds()
			}
		}
		wins = append(wins, fmt.Sprintf("%s/%d: %s", runs[0].set.Name, runs[0].seed, win))
		for _, r := range runs {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.4g\t%d\t%s\t", r.set.Name, r.n, r.set.K, r.gamma, r.seed, r.method)
			for _, rel := range targets {
				if pt, ok := reach(r, fb, rel); ok {
					fmt.Fprintf(tw, "%d\t%.2f\t", pt.Passes, pt.Elapsed.Seconds())
				} else {
					fmt.Fprint(tw, "-\t-\t")
				}
			}
			last := r.trace[len(r.trace)-1]
			fmt.Fprintf(tw, "%.10g\t%.2e\t%d\t%.1f\t%s\t\n", last.Objective, (last.Objective-fb)/fb, last.Passes, last.Elapsed.Seconds(), r.stopped)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "best = the smallest objective any run of the set and seed recorded; '-' = not reached within the run's budget")
	fmt.Fprintln(w, "fastest to 0.01% in seconds (set/seed):", strings.Join(wins, ", "))
}

// writeString writes s to path atomically.
func writeString(path, s string) error {
	return store.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	})
}

// writeFigure draws (f - best)/best against passes and against seconds, one
// row of two panels per data set.
func writeFigure(path string, all [][]*run) error {
	fig := figure.Figure{Cols: 2}
	for _, runs := range all {
		fb := best(runs)
		title := fmt.Sprintf("%s (n = %d, k = %d)", runs[0].set.Name, runs[0].n, runs[0].set.K)
		byPass := figure.Panel{Title: title, XLabel: "tile passes", YLabel: "(f - best)/best", LogX: true, LogY: true}
		bySec := figure.Panel{Title: title, XLabel: "seconds", YLabel: "(f - best)/best", LogX: true, LogY: true}
		for _, r := range runs {
			sp := figure.Series{Label: r.method}
			ss := figure.Series{Label: r.method}
			for _, pt := range r.trace {
				ex := (pt.Objective - fb) / fb
				sp.X, sp.Y = append(sp.X, float64(pt.Passes)), append(sp.Y, ex)
				ss.X, ss.Y = append(ss.X, pt.Elapsed.Seconds()), append(ss.Y, ex)
			}
			byPass.Series = append(byPass.Series, sp)
			bySec.Series = append(bySec.Series, ss)
		}
		fig.Panels = append(fig.Panels, byPass, bySec)
	}
	return fig.Save(path)
}

// timePasses times three Frank-Wolfe iterations and three row-CD sweeps (in
// both schedules) on the Gaussian kernel of n points drawn from a mixture of
// 10 Gaussians in 8 dimensions, and prints the seconds of each.
func (c *config) timePasses(ctx context.Context, n int, stdout io.Writer) error {
	const p, k, iters = 8, 10, 3
	rng := rand.New(rand.NewPCG(c.seed, 1))
	centers := make([]float64, k*p)
	for i := range centers {
		centers[i] = 3 * rng.NormFloat64()
	}
	x := make([]float64, n*p)
	for i := range n {
		c := rng.IntN(k)
		for q := range p {
			x[i*p+q] = centers[c*p+q] + rng.NormFloat64()
		}
	}
	aff, err := c.affinity(ctx, &store.Table{Features: x, N: n, P: p}, "mixture")
	if err != nil {
		return err
	}
	defer aff.Close()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(stdout, "# n = %d, p = %d, k = %d, gamma = %.4g, kernel %s, workers %d, load average %s\n",
		n, p, k, aff.Gamma, aff.Engine.Kernel(), c.workers, strings.TrimSpace(string(load)))
	w0 := make([]float64, n*k)
	if err := fw.Initialize(w0, k, fw.StartRandom, c.seed); err != nil {
		return err
	}
	report := func(name string, times []time.Duration, total time.Duration) {
		var parts []string
		for _, t := range times {
			parts = append(parts, fmt.Sprintf("%.2f", t.Seconds()))
		}
		fmt.Fprintf(stdout, "%-22s seconds each: %s (whole run %.1fs)\n", name, strings.Join(parts, " "), total.Seconds())
	}
	var times []time.Duration
	w := append([]float64(nil), w0...)
	set := methods.Settings(0, 0, iters, 0)
	set.Workers = c.workers
	last := time.Duration(0)
	set.Recorder = func(it fw.Iteration) error {
		if !it.Final {
			times = append(times, it.Elapsed-last)
		}
		last = it.Elapsed
		return nil
	}
	res, err := fw.Minimize(ctx, fw.Problem{P: aff, K: k}, w, &set, &fw.FrankWolfe{})
	if err != nil {
		return err
	}
	report("fw iteration", times, res.Runtime)
	passTimes := func(it fw.Iteration) error {
		if !it.Final {
			times = append(times, it.PassTime)
		}
		return nil
	}
	for _, mode := range []struct {
		name string
		mem  int64
	}{{"rowcd sweep (strip)", 0}, {"rowcd sweep (two-pass)", 1}} {
		times, last = nil, 0
		w := append([]float64(nil), w0...)
		rs := methods.Settings(0, 0, iters, 0)
		rs.Workers, rs.Recorder = c.workers, passTimes
		res, err := fw.Minimize(ctx, fw.Problem{P: aff, K: k}, w, &rs, &fw.RowCD{BlockSize: c.block, StripMemory: mode.mem})
		if err != nil {
			return err
		}
		report(mode.name, times, res.Runtime)
	}
	return nil
}
