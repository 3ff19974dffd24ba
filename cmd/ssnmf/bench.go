package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/tile"
)

// benchConfig holds the flags of ssnmf bench.
type benchConfig struct {
	n, reps, fallbackReps int
	ps, ks                []int
	workers, block        int
	prec                  tile.Precision
	probe                 time.Duration
}

// bench runs "ssnmf bench": the tile passes on random Gaussian data, timed
// for the portable fallback kernel and the vectorized one in the same run,
// with a short FMA probe that measures this machine's peak for comparison.
func bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ssnmf bench", "Usage: ssnmf bench [flags]\n\n"+
		"Times the tile passes (generation alone, P·S, P·W) and the exact kNN graph build on n\n"+
		"random points in p dimensions, for the portable fallback kernel and the vectorized\n"+
		"kernel, in kernel entries per second (all n² entries counted), and compares them with\n"+
		"this machine's FMA peak, measured by a short probe in the same run, and the kNN build\n"+
		"with the P·S pass. Every figure is a median over the repetitions.")
	c := benchConfig{prec: tile.Float32}
	fs.IntVar(&c.n, "n", 20000, "number of points")
	ps := fs.String("p", "4,16,36", "comma-separated feature dimensions")
	ks := fs.String("k", "10,100", "comma-separated numbers of clusters")
	fs.IntVar(&c.reps, "reps", 3, "passes timed per figure of the fast kernel (median)")
	fs.IntVar(&c.fallbackReps, "fallback-reps", 1, "passes timed per figure of the fallback kernel (median); 0 skips the fallback")
	fs.IntVar(&c.workers, "workers", runtime.GOMAXPROCS(0), "goroutines for the passes and the probe")
	fs.IntVar(&c.block, "tile", tile.DefaultBlockSize, "tile edge")
	precName := fs.String("precision", "float32", "kernel values: float32 or float64")
	fs.DurationVar(&c.probe, "probe", 300*time.Millisecond, "duration of the FMA probe per precision")
	quick := fs.Bool("quick", false, "a small smoke run: n=300, p=4, k=10, one repetition")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("ssnmf bench takes no arguments, have %q", pos[0])
	}
	if c.prec, err = tile.ParsePrecision(*precName); err != nil {
		return usagef("-precision: %v", err)
	}
	if c.ps, err = parseInts(*ps, 1); err != nil {
		return usagef("-p: %v", err)
	}
	if c.ks, err = parseInts(*ks, 1); err != nil {
		return usagef("-k: %v", err)
	}
	if *quick {
		c.n, c.ps, c.ks, c.reps, c.fallbackReps, c.probe = 300, []int{4}, []int{10}, 1, 1, 20*time.Millisecond
	}
	switch {
	case c.n < 2:
		return usagef("-n %d: want at least 2", c.n)
	case c.reps < 1:
		return usagef("-reps %d: want at least 1", c.reps)
	case c.fallbackReps < 0:
		return usagef("-fallback-reps %d: want 0 or more", c.fallbackReps)
	case c.workers < 1:
		return usagef("-workers %d: want at least 1", c.workers)
	case c.block < 1:
		return usagef("-tile %d: want at least 1", c.block)
	case c.probe <= 0:
		return usagef("-probe %v: want a positive duration", c.probe)
	}
	if checkOnly(ctx) {
		return nil
	}
	return runBench(ctx, c, stdout, stderr)
}

// parseInts parses a comma-separated list of integers >= lo.
func parseInts(s string, lo int) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < lo {
			return nil, fmt.Errorf("%q is not a list of integers >= %d", s, lo)
		}
		out = append(out, v)
	}
	return out, nil
}

// benchRow is one line of the table.
type benchRow struct {
	p, k           int
	pass           string
	fallback, fast float64 // entries/s; 0 if not measured
	flopsPerEntry  float64 // flops per generated entry in the fast kernel's model
}

func runBench(ctx context.Context, c benchConfig, stdout, stderr io.Writer) error {
	vecISA := tile.SupportedISAs()[0]
	vecName, vec := vecISA.String(), vecISA != tile.ISAGo
	peak, peakKind, err := tile.FMAPeak(ctx, tile.ISAAuto, c.prec, c.workers, c.probe)
	if err != nil {
		return err
	}
	fastName := "none (no vector kernel for this CPU)"
	if vec {
		fastName = vecName + "/" + c.prec.String()
	}
	fmt.Fprintf(stdout, "ssnmf bench: n=%d workers=%d tile=%d precision=%s fast=%s fallback=go/%s\n",
		c.n, c.workers, c.block, c.prec, fastName, c.prec)
	fmt.Fprintf(stdout, "FMA peak (probe, %d workers, %s): %.3g flop/s\n\n", c.workers, peakKind, peak)

	var rows []benchRow
	for _, p := range c.ps {
		x := benchFeatures(c.n, p)
		g, err := tile.NewGaussianPrecision(x, c.n, p, 1/(2*float64(p)), c.prec)
		if err != nil {
			return err
		}
		// The flop model of the fast kernel per generated entry: p FMAs of
		// the dot product, about 12 vector operations for the exponent and
		// its argument, and for P·W k FMAs in each direction.
		gen := 2*float64(p) + 2*12
		passes := []benchRow{{p: p, pass: "gen", flopsPerEntry: gen}}
		for _, k := range c.ks {
			passes = append(passes, benchRow{p: p, k: k, pass: "P·S", flopsPerEntry: gen})
		}
		for _, k := range c.ks {
			passes = append(passes, benchRow{p: p, k: k, pass: "P·W", flopsPerEntry: gen + 4*float64(k)})
		}
		// The kNN build screens distances with the same dot products and
		// no exponent.
		passes = append(passes, benchRow{p: p, pass: "kNN", flopsPerEntry: 2 * float64(p)})
		for _, r := range passes {
			fmt.Fprintf(stderr, "bench: p=%d %s k=%d\n", r.p, r.pass, r.k)
			if c.fallbackReps > 0 {
				e := &tile.Engine{Source: g, BlockSize: c.block, Workers: c.workers, ISA: tile.ISAGo}
				if r.fallback, err = timePass(ctx, e, x, r, c.n, c.fallbackReps); err != nil {
					return err
				}
			}
			if vec {
				e := &tile.Engine{Source: g, BlockSize: c.block, Workers: c.workers}
				if r.fast, err = timePass(ctx, e, x, r, c.n, c.reps); err != nil {
					return err
				}
			}
			rows = append(rows, r)
		}
	}

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "p\tk\tpass\tfallback entries/s\tfast entries/s\tspeed-up\tfast % of FMA peak\t")
	for _, r := range rows {
		k := "-"
		if r.k > 0 {
			k = strconv.Itoa(r.k)
		}
		fb, fast, up, frac := "-", "-", "-", "-"
		if r.fallback > 0 {
			fb = fmt.Sprintf("%.3g", r.fallback)
		}
		if r.fast > 0 {
			fast = fmt.Sprintf("%.3g", r.fast)
			// Only the upper triangle is generated: n²/2 entries per pass.
			frac = fmt.Sprintf("%.1f%%", 100*r.fast/2*r.flopsPerEntry/peak)
		}
		if r.fallback > 0 && r.fast > 0 {
			up = fmt.Sprintf("%.1fx", r.fast/r.fallback)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.p, k, r.pass, fb, fast, up, frac)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nentries/s count all n² entries (the upper triangle of tiles is generated once);\n"+
		"%% of peak counts 2p+24 flops per generated entry, plus 4k for P·W, and 2p for the kNN build\n"+
		"(the %d-nearest-neighbour graph, exact); medians of %d (fast) and %d (fallback) passes.\n",
		graph.DefaultNeighbors, c.reps, c.fallbackReps)
	for _, r := range rows {
		if r.pass != "kNN" {
			continue
		}
		for _, ps := range rows {
			if ps.p == r.p && ps.pass == "P·S" && ps.k == c.ks[0] {
				fmt.Fprintf(stdout, "p=%d: kNN build at %s of the P·S pass (k=%d)\n", r.p, ratios(r, ps), ps.k)
			}
		}
	}
	return nil
}

// ratios formats the rates of r as fractions of those of ref, fast and
// fallback, where both are measured.
func ratios(r, ref benchRow) string {
	var out []string
	if r.fast > 0 && ref.fast > 0 {
		out = append(out, fmt.Sprintf("%.0f%% (fast)", 100*r.fast/ref.fast))
	}
	if r.fallback > 0 && ref.fallback > 0 {
		out = append(out, fmt.Sprintf("%.0f%% (fallback)", 100*r.fallback/ref.fallback))
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}

// benchFeatures returns n points in p dimensions in three Gaussian clusters,
// from a fixed seed.
func benchFeatures(n, p int) []float64 {
	rng := rand.New(rand.NewPCG(1, uint64(p)))
	x := make([]float64, n*p)
	for i := range n {
		c := float64(rng.IntN(3))
		for q := range p {
			x[i*p+q] = c + rng.NormFloat64()
		}
	}
	return x
}

// timePass runs pass r reps times and returns the median rate in entries
// per second.
func timePass(ctx context.Context, e *tile.Engine, x []float64, r benchRow, n, reps int) (float64, error) {
	k := max(r.k, 1)
	y := make([]float64, n*k)
	w := make([]float64, n*k)
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(i % k)
		w[i*k+int(s[i])] = 0.5
		w[i*k+(i+1)%k] += 0.5
	}
	rates := make([]float64, reps)
	for i := range rates {
		start := time.Now()
		var err error
		switch r.pass {
		case "gen":
			_, err = e.Stats(ctx, nil)
		case "P·S":
			err = e.MulOneHot(ctx, y, s, k)
		case "P·W":
			_, err = e.Mul(ctx, y, w, k, nil)
		case "kNN":
			_, err = graph.KNN(ctx, x, n, r.p, graph.KNNOptions{Workers: e.Workers, Kernel: e.ISA})
		}
		if err != nil {
			return 0, fmt.Errorf("bench %s p=%d k=%d: %w", r.pass, r.p, r.k, err)
		}
		rates[i] = float64(n) * float64(n) / time.Since(start).Seconds()
	}
	slices.Sort(rates)
	return rates[reps/2], nil
}
