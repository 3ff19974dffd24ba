package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
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
// for every kernel family this CPU runs (the portable one among them), each
// compared with the portable kernel and with its family's FMA peak,
// measured by a short probe in the same run.
func bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ssnmf bench", "Usage: ssnmf bench [flags]\n\n"+
		"Times the tile passes (generation alone, P·S, P·W) and the exact kNN graph build on n\n"+
		"random points in p dimensions for every kernel family this CPU runs (avx512, avx2,\n"+
		"neon, and go, the portable kernel), in kernel entries per second (all n² entries\n"+
		"counted), with each family's speed-up over go and share of its FMA peak, measured by\n"+
		"a short probe of that family's FMA instructions in the same run; the header names the\n"+
		"CPU and its vector features. A family without a kernel for a pass in this build would\n"+
		"show \"-*\" there and a footnote saying why; none does now: avx512, avx2 and neon all\n"+
		"have the dense passes (gen, P·S, P·W) and the kNN screen.\n"+
		"The run ends with the kNN build's rate as a share of the P·S pass's. Every figure is a\n"+
		"median over the repetitions.")
	c := benchConfig{prec: tile.Float32}
	fs.IntVar(&c.n, "n", 20000, "number of points")
	ps := fs.String("p", "4,16,36", "comma-separated feature dimensions")
	ks := fs.String("k", "10,100", "comma-separated numbers of clusters")
	fs.IntVar(&c.reps, "reps", 3, "passes timed per figure of a vector kernel (median)")
	fs.IntVar(&c.fallbackReps, "fallback-reps", 1, "passes timed per figure of the portable kernel, go (median); 0 skips it")
	fs.IntVar(&c.workers, "workers", runtime.GOMAXPROCS(0), "goroutines for the passes and the probes")
	fs.IntVar(&c.block, "tile", tile.DefaultBlockSize, "tile edge")
	precName := fs.String("precision", "float32", "kernel values: float32 or float64")
	fs.DurationVar(&c.probe, "probe", 300*time.Millisecond, "duration of each family's FMA probe")
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

// benchRow is one pass of the table, with its rate for each family.
type benchRow struct {
	p, k          int
	pass          string
	flopsPerEntry float64              // flops per generated entry in the vector kernels' model
	rate          map[tile.ISA]float64 // entries/s; 0 if not measured, noKernel if the family has none
}

// noKernel is the rate of a pass that a family has no kernel for in this
// build.
const noKernel = -1

// benchFamily is a kernel family of the run, its FMA peak and the passes
// timed per figure.
type benchFamily struct {
	isa  tile.ISA
	peak float64
	kind string // the probe's instruction
	reps int
}

func runBench(ctx context.Context, c benchConfig, stdout, stderr io.Writer) error {
	fams, err := benchFamilies(ctx, c)
	if err != nil {
		return err
	}
	if err := benchHeader(stdout, c, fams); err != nil {
		return err
	}
	rows, err := benchRows(ctx, c, fams, stderr)
	if err != nil {
		return err
	}
	return benchTable(stdout, c, fams, rows)
}

// benchHasDense reports whether the family k has the dense passes' kernels
// (the portable one has them all).
func benchHasDense(k tile.ISA) bool { return k == tile.ISAGo || tile.DenseVectorKernel(k) }

// benchFamilies returns the families this CPU runs, the portable one (the
// baseline) first, then the vector ones from the narrowest, with their
// FMA peaks.
func benchFamilies(ctx context.Context, c benchConfig) ([]benchFamily, error) {
	var fams []benchFamily
	supported := tile.SupportedISAs()
	for i := len(supported) - 1; i >= 0; i-- {
		f := benchFamily{isa: supported[i], reps: c.reps}
		if f.isa == tile.ISAGo {
			f.reps = c.fallbackReps
		}
		var err error
		if f.peak, f.kind, err = tile.FMAPeak(ctx, f.isa, c.prec, c.workers, c.probe); err != nil {
			return nil, err
		}
		fams = append(fams, f)
	}
	return fams, nil
}

// benchHeader prints the run's settings, the CPU, the kernels and their
// FMA peaks.
func benchHeader(stdout io.Writer, c benchConfig, fams []benchFamily) error {
	var names, denseNames []string
	for _, f := range fams {
		names = append(names, f.isa.String())
		if benchHasDense(f.isa) {
			denseNames = append(denseNames, f.isa.String())
		}
	}

	fmt.Fprintf(stdout, "ssnmf bench: n=%d workers=%d tile=%d precision=%s\n", c.n, c.workers, c.block, c.prec)
	if model := cpuModel(); model != "" {
		fmt.Fprintf(stdout, "cpu: %s (%s)\n", model, tile.CPUFeatures())
	} else {
		fmt.Fprintf(stdout, "cpu: %s\n", tile.CPUFeatures())
	}
	fmt.Fprintf(stdout, "kernels: %s (go: the portable kernel, the baseline); dense passes (gen, P·S, P·W): %s\n\n",
		strings.Join(names, ", "), strings.Join(denseNames, ", "))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "kernel\tFMA peak flop/s\tprobe (%d workers, %v)\n", c.workers, c.probe)
	for _, f := range fams {
		fmt.Fprintf(tw, "%s\t%.3g\t%s\n", f.isa, f.peak, f.kind)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	return nil
}

// benchRows times every pass of every family for each p and k.
func benchRows(ctx context.Context, c benchConfig, fams []benchFamily, stderr io.Writer) ([]benchRow, error) {
	var rows []benchRow
	for _, p := range c.ps {
		x := benchFeatures(c.n, p)
		g, err := tile.NewGaussianPrecision(x, c.n, p, 1/(2*float64(p)), c.prec)
		if err != nil {
			return nil, err
		}
		// The flop model of the vector kernels per generated entry: p FMAs
		// of the dot product, about 12 vector operations for the exponent
		// and its argument, and for P·W k FMAs in each direction.
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
			r.rate = map[tile.ISA]float64{}
			for _, f := range fams {
				has := benchHasDense(f.isa)
				if r.pass == "kNN" {
					has = knnKernel(x, p, f.isa)
				}
				switch {
				case !has:
					r.rate[f.isa] = noKernel
					continue
				case f.reps == 0:
					continue
				}
				fmt.Fprintf(stderr, "bench: p=%d %s k=%d %s\n", r.p, r.pass, r.k, f.isa)
				e := &tile.Engine{Source: g, BlockSize: c.block, Workers: c.workers, ISA: f.isa}
				if r.rate[f.isa], err = timePass(ctx, e, x, r, c.n, f.reps); err != nil {
					return nil, err
				}
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// benchTable prints the rates, speed-ups and fractions of peak of rows,
// the reasons for the kernels missing, and the kNN build against P·S.
func benchTable(stdout io.Writer, c benchConfig, fams []benchFamily, rows []benchRow) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "p\tk\tpass\tkernel\tentries/s\tspeed-up\t% of FMA peak\t")
	missing := map[tile.ISA]bool{}
	for _, r := range rows {
		k := "-"
		if r.k > 0 {
			k = strconv.Itoa(r.k)
		}
		base := r.rate[tile.ISAGo]
		for _, f := range fams {
			v, up, frac := "-", "-", "-"
			switch rate := r.rate[f.isa]; {
			case rate == noKernel:
				v, missing[f.isa] = "-*", true
			case rate > 0:
				v = fmt.Sprintf("%.3g", rate)
				// Only the upper triangle is generated: n²/2 entries per pass.
				frac = percent(100 * rate / 2 * r.flopsPerEntry / f.peak)
				if f.isa != tile.ISAGo && base > 0 {
					up = fmt.Sprintf("%.1fx", rate/base)
				}
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.p, k, r.pass, f.isa, v, up, frac)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	for _, f := range fams {
		if !missing[f.isa] {
			continue
		}
		var why []string
		if !benchHasDense(f.isa) {
			why = append(why, "its dense passes (gen, P·S, P·W) are not written yet")
		}
		if !knnKernel(benchFeatures(2, 1), 1, f.isa) {
			why = append(why, "its kNN screen is not written yet")
		}
		fmt.Fprintf(stdout, "-* %s: %s\n", f.isa, strings.Join(why, "; "))
	}
	fmt.Fprintf(stdout, "entries/s count all n² entries (the upper triangle of tiles is generated once); speed-up is\n"+
		"over go; %% of FMA peak counts 2p+24 flops per generated entry, plus 4k for P·W, and 2p for the\n"+
		"kNN build (the %d-nearest-neighbour graph, exact), against the family's own probe (go: scalar\n"+
		"FMAs); medians of %d (vector kernels) and %d (go) passes.\n",
		graph.DefaultNeighbors, c.reps, c.fallbackReps)
	for _, r := range rows {
		if r.pass != "kNN" {
			continue
		}
		for _, ps := range rows {
			if ps.p == r.p && ps.pass == "P·S" && ps.k == c.ks[0] {
				fmt.Fprintf(stdout, "p=%d: kNN build at %s of the P·S pass (k=%d)\n", r.p, ratios(r, ps, fams), ps.k)
			}
		}
	}
	return nil
}

// ratios formats the rates of r as fractions of those of ref, for each
// family where both are measured.
func ratios(r, ref benchRow, fams []benchFamily) string {
	var out []string
	for _, f := range fams {
		if a, b := r.rate[f.isa], ref.rate[f.isa]; a > 0 && b > 0 {
			out = append(out, fmt.Sprintf("%.0f%% (%s)", 100*a/b, f.isa))
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}

// percent formats a share in percent with two significant digits below 1%.
func percent(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.2g%%", v)
	}
	return fmt.Sprintf("%.1f%%", v)
}

// knnKernel reports whether the kNN build of family k screens with that
// family's kernel, rather than with the portable one under its name: the
// screen of a few of the rows of x (n×p) names its kernel.
func knnKernel(x []float64, p int, k tile.ISA) bool {
	m := min(len(x)/max(p, 1), 8)
	ps, err := tile.NewPairs(x[:m*p], m, p, max(m, 1), k)
	return err == nil && strings.HasPrefix(ps.Kernel(), k.String()+"/")
}

// cpuModel returns the CPU's model name from /proc/cpuinfo, or "" where
// the file or the line is missing (arm64 Linux has none).
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if key, val, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(val)
		}
	}
	return ""
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
