// Command embedcost measures the spectral embedding's cost and the
// clustering made of it, by starting block and tolerance: it builds the
// default kNN graph of an input once (kept in a cache file beside the
// labels), then runs spectral.Embed with each setting asked for and
// prints its iterations, passes over P, seconds, largest residual and the
// ARI of its spectral clustering against the labels and against the
// first setting's clustering.
//
// Usage:
//
//	go run ./studies/spectral/embedcost -cache DIR [-k K] [-workers W]
//	    [-runs cells:tol,cells:tol,...] INPUT
//
// A run "rows:tol[:maxiter[:degree[:sweeps]]]" is spectral.Options{CellRows:
// rows, Tol: tol, MaxIter: maxiter, Degree: degree, Sweeps: sweeps}; rows
// -1 is the random start.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/kmeans"
	"github.com/ssnmf/ssnmf/score"
	"github.com/ssnmf/ssnmf/spectral"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/tile"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "embedcost:", err)
		os.Exit(1)
	}
}

func run() error {
	cache := flag.String("cache", "", "directory of the cached graph and labels (required)")
	k := flag.Int("k", 0, "clusters; 0: the label column's classes")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "goroutines")
	runs := flag.String("runs", "-1:1e-6,512:1e-6", "settings cells:tol, comma-separated")
	verbose := flag.Bool("v", false, "print every iteration's largest residual")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the embeddings to `FILE`")
	flag.Parse()
	if flag.NArg() != 1 || *cache == "" {
		return errors.New("want -cache DIR and one INPUT (usage in the package doc)")
	}
	ctx := context.Background()
	g, labels, err := load(ctx, flag.Arg(0), *cache, *workers)
	if err != nil {
		return err
	}
	defer g.Close()
	if *k == 0 {
		*k = slices.Max(labels) + 1
	}
	fmt.Printf("n %d nnz %d k %d workers %d\n", g.N(), g.NNZ(), *k, *workers)
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var progress func(it, passes int, res float64)
	if *verbose {
		progress = func(it, passes int, res float64) {
			fmt.Printf("  iteration %d passes %d residual %.3g\n", it, passes, res)
		}
	}
	refFile := filepath.Join(*cache, "exact.txt")
	ref, _ := readInts(refFile) // the clustering of the exact embedding, if saved
	for _, r := range strings.Split(*runs, ",") {
		f := strings.Split(r+":0:0:0", ":")
		c, err1 := strconv.Atoi(f[0])
		t, err2 := strconv.ParseFloat(f[1], 64)
		it, err3 := strconv.Atoi(f[2])
		deg, err4 := strconv.Atoi(f[3])
		sweeps, err5 := strconv.Atoi(f[4])
		if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
			return fmt.Errorf("-runs: %q is not cells:tol[:maxiter[:degree[:sweeps]]]: %w", r, err)
		}
		begin := time.Now()
		e, err := spectral.Embed(ctx, g, spectral.Options{K: *k, CellRows: c, Tol: t, MaxIter: it, Degree: deg, Sweeps: sweeps, Seed: 1, Workers: *workers, Progress: progress})
		if err != nil {
			return err
		}
		secs := time.Since(begin).Seconds()
		st, err := spectral.NewStart(e, 1)
		if err != nil {
			return err
		}
		w := make([]float64, g.N()**k)
		km, err := st.Memberships(ctx, w, *k, kmeans.Settings{Seed: 1, Workers: *workers, Starts: 10})
		if err != nil {
			return err
		}
		pred := make([]int, g.N())
		for i, l := range km.Labels {
			pred[i] = int(l)
		}
		ari, _ := score.ARI(labels, pred)
		agree := 1.0
		switch {
		case ref == nil && c < 0 && t <= 1e-6:
			ref = pred
			if err := writeInts(refFile, pred); err != nil {
				return err
			}
		case ref != nil:
			agree, _ = score.ARI(ref, pred)
		}
		fmt.Printf("%-16s cellrows %3d tol %-6g iter %4d passes %4d embed %7.2fs res %.2g ARI %.4f vs-first %.4f gap %.3g values %.7f\n",
			r, c, t, e.Iterations, e.Passes, secs, slices.Max(e.Residuals), ari, agree, spectral.Eigengap(e.Values, e.K, e.Components), e.Values)
	}
	return nil
}

// load returns the input's default kNN graph and labels in the graph's
// order of the rows, from the cache if it holds them.
func load(ctx context.Context, path, cache string, workers int) (*graph.CSR, []int, error) {
	gfile, lfile := filepath.Join(cache, "graph.csr"), filepath.Join(cache, "labels.txt")
	if _, err := os.Stat(lfile); err != nil {
		if err := build(ctx, path, cache, gfile, lfile, workers); err != nil {
			return nil, nil, err
		}
	}
	g, _, err := graph.OpenFile(gfile)
	if err != nil {
		return nil, nil, err
	}
	g.Workers = workers
	labels, err := readInts(lfile)
	return g, labels, err
}

// readInts reads a file of integers, one a line.
func readInts(path string) ([]int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(raw)) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// writeInts writes the integers, one a line.
func writeInts(path string, v []int) error {
	var sb strings.Builder
	for _, x := range v {
		fmt.Fprintln(&sb, x)
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}

// build writes the default kNN graph of the input and its labels in the
// graph's order into the cache.
func build(ctx context.Context, path, cache, gfile, lfile string, workers int) error {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	tab, err := input.Open(path, input.Auto, store.TableOptions{}, cache)
	if err != nil {
		return err
	}
	defer tab.Close()
	if tab.Labels == nil {
		return fmt.Errorf("%s: no label column", path)
	}
	spec := affinity.Spec{GammaRule: affinity.Neighbor, Clusters: len(tab.Classes), Standardize: true,
		BlockSize: tile.DefaultBlockSize, Workers: workers, Seed: 1, Name: path, GraphFile: gfile,
		Graph: &graph.KNNOptions{Weights: graph.SelfTuning, Recall: graph.DefaultRecall, Probes: graph.DefaultProbes,
			Rounds: graph.DefaultRounds, LeafRounds: graph.DefaultLeafRounds}}
	b, err := affinity.Build(ctx, tab, spec)
	if err != nil {
		return err
	}
	defer b.Close()
	labels := make([]int, tab.N)
	for i := range labels {
		r := i
		if b.Order != nil {
			r = int(b.Order[i])
		}
		labels[i] = tab.Labels[r]
	}
	return writeInts(lfile, labels)
}
