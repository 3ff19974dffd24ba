// Command quality measures how well ssnmf's clusters agree with the labels of
// the shared data sets, next to the paper's bandwidth and k-means.
//
// Usage:
//
//	go run ./scripts/quality [-data ../shared/data] [-sets blood,yeast,satimage,pendigits]
//	    [-method rowcd|fw] [-max-iter 300] [-restarts 1] [-seed 0] [-workers N]
//	    [-knn 30 [-weights connectivity|self-tuning]] [-no-gamma1] [-dense-max-n 60000]
//
// For every data set, with k = the number of classes and z-scored features,
// it runs
//
//   - ssnmf with the recommended defaults: gamma from tile.AutoBandwidth and
//     a start from k-means (kmeans.Result.Soft with beta = gamma);
//   - ssnmf with the paper's gamma = 1, everything else the same;
//   - with -knn M, ssnmf on the kNN graph of M neighbours (affinity.Spec.Graph,
//     as -affinity knn), everything else the same;
//   - the built-in k-means (greedy k-means++, Lloyd, best of 10 starts),
//
// and prints a Markdown table of ARI, NMI and accuracy against the labels, the
// gamma used, the final objective and the wall-clock seconds of each method
// (standardization and the bandwidth sample included). The ssnmf runs use
// the method of -method (rowcd, the default of `ssnmf solve`, or fw) and go
// through the streaming tile engine, as `ssnmf solve` does. Sets with more
// than -dense-max-n rows get no run on the dense P (a pass costs n² kernel
// entries), and a row that says so.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/kmeans"
	"github.com/ssnmf/ssnmf/methods"
	"github.com/ssnmf/ssnmf/score"
	"github.com/ssnmf/ssnmf/scripts/internal/experiment"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
)

// kmeansStarts is the number of k-means++ starts of the k-means baseline.
const kmeansStarts = 10

type options struct {
	data     string
	sets     []string
	method   string
	maxIter  int
	restarts int
	init     string
	seed     uint64
	workers  int
	// neighbors > 0 adds a row with the kNN graph of that many neighbours
	// and these weights; noGamma1 leaves out the row with gamma = 1.
	neighbors int
	weights   graph.Weights
	noGamma1  bool
	// denseMaxN is the largest n of the runs on the dense P; larger sets
	// get a row that says they were left out, and why.
	denseMaxN int
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	o := options{}
	flag.StringVar(&o.data, "data", "../shared/data", "directory of the shared data sets")
	sets := flag.String("sets", "blood,yeast,satimage,pendigits", "comma-separated data sets (NAME.csv in -data)")
	flag.StringVar(&o.method, "method", methods.Default, "method of the ssnmf runs: "+methods.List()+" but kmeans")
	flag.IntVar(&o.maxIter, "max-iter", 300, "iterations (rowcd: sweeps) of each ssnmf run")
	flag.StringVar(&o.init, "init", "kmeans", "start of the ssnmf runs: kmeans (soft k-means memberships, beta = gamma) or random")
	flag.IntVar(&o.restarts, "restarts", 1, "seeded starts of each ssnmf run; the lowest objective is kept")
	flag.Uint64Var(&o.seed, "seed", 0, "seed of the bandwidth sample, the starts and k-means")
	flag.IntVar(&o.workers, "workers", runtime.GOMAXPROCS(0), "goroutines")
	flag.IntVar(&o.neighbors, "knn", 0, "if > 0, also run ssnmf on the kNN graph with this many neighbours (-affinity knn -neighbors N)")
	weights := flag.String("weights", "connectivity", "the kNN graph's weights: connectivity or self-tuning")
	flag.BoolVar(&o.noGamma1, "no-gamma1", false, "leave out the run with the paper's gamma = 1")
	flag.IntVar(&o.denseMaxN, "dense-max-n", 60000, "leave out the runs on the dense P for sets with more rows (a pass costs n² kernel entries); 0: no limit")
	flag.Parse()
	o.sets = strings.Split(*sets, ",")
	var err error
	if o.weights, err = graph.ParseWeights(*weights); err != nil {
		slog.Error("quality", "err", err)
		os.Exit(2)
	}
	if err := run(ctx, o, os.Stdout); err != nil {
		slog.Error("quality", "err", err)
		os.Exit(1)
	}
}

// row is one line of the table.
type row struct {
	set, method string
	n, k        int
	gamma       float64
	scores      score.Scores
	objective   float64 // 0 for k-means
	seconds     float64
	skipped     bool // not run; method says why
}

func run(ctx context.Context, o options, out io.Writer) error {
	if o.maxIter < 1 || o.restarts < 1 || o.workers < 1 {
		return fmt.Errorf("-max-iter, -restarts and -workers must be >= 1")
	}
	if m, err := methods.Lookup(o.method); err != nil || m.Features {
		return fmt.Errorf("-method %q: want a method of symmetric NMF (%s but kmeans)", o.method, methods.List())
	}
	if o.init != "kmeans" && o.init != "random" {
		return fmt.Errorf("-init must be kmeans or random, have %q", o.init)
	}
	fmt.Fprintf(out, "| data | n | k | method | gamma | ARI | NMI | accuracy | objective | seconds |\n")
	fmt.Fprintf(out, "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, set := range o.sets {
		rows, err := evaluate(ctx, o, set)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if r.skipped {
				fmt.Fprintf(out, "| %s | %d | %d | %s | - | - | - | - | - | - |\n", r.set, r.n, r.k, r.method)
				continue
			}
			obj := "-"
			if r.objective != 0 {
				obj = fmt.Sprintf("%.6g", r.objective)
			}
			gamma := "-"
			if r.gamma != 0 {
				gamma = fmt.Sprintf("%.4g", r.gamma)
			}
			fmt.Fprintf(out, "| %s | %d | %d | %s | %s | %.4f | %.4f | %.4f | %s | %.1f |\n",
				r.set, r.n, r.k, r.method, gamma, r.scores.ARI, r.scores.NMI, r.scores.Accuracy, obj, r.seconds)
		}
	}
	return nil
}

// evaluate runs the three methods on one data set.
func evaluate(ctx context.Context, o options, set string) ([]row, error) {
	path := experiment.Path(o.data, set)
	tab, err := experiment.ReadLabeled(path)
	if err != nil {
		return nil, err
	}
	n, p, k := tab.N, tab.P, len(tab.Classes)
	base := row{set: set, n: n, k: k}
	var rows []row

	// Each method standardizes its own copy, so its time includes it.
	features := func() *store.Table {
		return &store.Table{Features: slices.Clone(tab.Features), N: n, P: p}
	}

	dense := o.denseMaxN <= 0 || n <= o.denseMaxN
	if !dense {
		rows = append(rows, row{method: fmt.Sprintf("ssnmf (defaults): not run, n > -dense-max-n %d (a pass is %.2g kernel entries)",
			o.denseMaxN, float64(n)*float64(n)), skipped: true})
	} else {
		begin := time.Now()
		r, err := solve(ctx, o, features(), path, affinity.Spec{}, k, tab.Labels)
		if err != nil {
			return nil, fmt.Errorf("%s: default settings: %w", path, err)
		}
		r.method, r.seconds = "ssnmf (defaults)", time.Since(begin).Seconds()
		rows = append(rows, r)
	}

	if dense && !o.noGamma1 {
		begin := time.Now()
		r, err := solve(ctx, o, features(), path, affinity.Spec{Gamma: 1}, k, tab.Labels)
		if err != nil {
			return nil, fmt.Errorf("%s: gamma = 1: %w", path, err)
		}
		r.method, r.seconds = "ssnmf, gamma = 1", time.Since(begin).Seconds()
		rows = append(rows, r)
	}

	if o.neighbors > 0 {
		begin := time.Now()
		knn := &graph.KNNOptions{Neighbors: o.neighbors, Weights: o.weights}
		r, err := solve(ctx, o, features(), path, affinity.Spec{Graph: knn}, k, tab.Labels)
		if err != nil {
			return nil, fmt.Errorf("%s: kNN graph: %w", path, err)
		}
		r.method, r.seconds = fmt.Sprintf("ssnmf, knn %d %v", o.neighbors, o.weights), time.Since(begin).Seconds()
		rows = append(rows, r)
	}

	begin := time.Now()
	x := features()
	tile.Standardize(x.Features, n, p)
	km, err := kmeans.Cluster(ctx, x.Features, n, p, k, kmeans.Settings{Starts: kmeansStarts, Seed: o.seed, Workers: o.workers})
	if err != nil {
		return nil, fmt.Errorf("%s: k-means: %w", path, err)
	}
	pred := make([]int, n)
	for i, c := range km.Labels {
		pred[i] = int(c)
	}
	r := row{}
	if r.scores, err = score.Compare(tab.Labels, pred); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.method, r.seconds = fmt.Sprintf("k-means (%d starts)", kmeansStarts), time.Since(begin).Seconds()
	rows = append(rows, r)

	for i := range rows {
		rows[i].set, rows[i].n, rows[i].k = base.set, base.n, base.k
	}
	return rows, nil
}

// solve runs o.restarts runs of the method of o over the affinity of spec
// (its Gamma by the automatic rule if 0) of the standardized features of
// tab, and scores the one with the lowest objective. Start
// r draws its k-means++ seeding (or its random W) with
// kmeans.StartSeed(o.seed, r).
func solve(ctx context.Context, o options, tab *store.Table, name string, spec affinity.Spec, k int, labels []int) (row, error) {
	spec.Standardize, spec.BlockSize, spec.Workers, spec.Seed, spec.Name = true, tile.DefaultBlockSize, o.workers, o.seed, name
	aff, err := affinity.Build(ctx, tab, spec)
	if err != nil {
		return row{}, err
	}
	defer aff.Close()
	method, err := methods.Lookup(o.method)
	if err != nil {
		return row{}, err
	}
	x, n, p := tab.Features, tab.N, tab.P
	gamma := aff.Gamma
	var best []float64
	bestF := 0.0
	w := make([]float64, n*k)
	for r := range o.restarts {
		seed := kmeans.StartSeed(o.seed, r)
		if o.init == "random" {
			if err := fw.Initialize(w, k, fw.StartRandom, seed); err != nil {
				return row{}, err
			}
		} else {
			km, err := kmeans.Cluster(ctx, x, n, p, k, kmeans.Settings{Seed: seed, Workers: o.workers})
			if err != nil {
				return row{}, err
			}
			if err := km.Soft(w, x, gamma); err != nil {
				return row{}, err
			}
		}
		res, err := fw.Minimize(ctx, fw.Problem{P: aff, K: k}, w, &fw.Settings{MaxIter: o.maxIter, Workers: o.workers},
			method.New(methods.Params{}))
		if err != nil {
			return row{}, err
		}
		if best == nil || res.Objective < bestF {
			best, bestF = slices.Clone(w), res.Objective
		}
	}
	out := row{gamma: gamma, objective: bestF}
	out.scores, err = score.Compare(labels, experiment.Clusters(best, k))
	return out, err
}
