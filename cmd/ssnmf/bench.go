package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/ssnmf/ssnmf/internal/kernelbench"
	"github.com/ssnmf/ssnmf/tile"
)

// bench runs "ssnmf bench": the tile passes on random Gaussian data, timed
// for every kernel family this CPU runs (the portable one among them), each
// compared with the portable kernel and with its family's FMA peak,
// measured by a short probe in the same run.
func bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ssnmf bench", "Usage: ssnmf bench [flags]\n\n"+
		"Times the tile passes (generation alone, P·S, P·W), the exact kNN graph build and its\n"+
		"distance kernel alone (screen) on n random points in p dimensions for every kernel\n"+
		"family this CPU runs (avx512, avx2, neon, and go, the portable kernel), in kernel\n"+
		"entries per second (all n² entries counted), with each family's speed-up over go and\n"+
		"share of its FMA peak, measured by a short probe of that family's FMA instructions in\n"+
		"the same run; the header names the CPU and its vector features. A family without a\n"+
		"kernel for a pass in this build would show \"-*\" there and a footnote saying why; none\n"+
		"does now: avx512, avx2 and neon all have the dense passes (gen, P·S, P·W) and the kNN\n"+
		"screen. The run ends with the kNN build's rate as a share of the P·S pass's. Every\n"+
		"figure is a median over the repetitions.")
	var c kernelbench.Settings
	fs.IntVar(&c.N, "n", 20000, "number of points")
	ps := fs.String("p", "4,16,36", "comma-separated feature dimensions")
	ks := fs.String("k", "10,100", "comma-separated numbers of clusters")
	fs.IntVar(&c.Reps, "reps", 3, "passes timed per figure of a vector kernel (median)")
	fs.IntVar(&c.FallbackReps, "fallback-reps", 1, "passes timed per figure of the portable kernel, go (median); 0 skips it")
	fs.IntVar(&c.Workers, "workers", runtime.GOMAXPROCS(0), "goroutines for the passes and the probes")
	fs.IntVar(&c.BlockSize, "tile", tile.DefaultBlockSize, "tile edge")
	precName := fs.String("precision", "float32", "kernel values: float32 or float64")
	fs.DurationVar(&c.Probe, "probe", 300*time.Millisecond, "duration of each family's FMA probe")
	quick := fs.Bool("quick", false, "a small smoke run: n=300, p=4, k=10, one repetition")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("ssnmf bench takes no arguments, have %q", pos[0])
	}
	if c.Precision, err = tile.ParsePrecision(*precName); err != nil {
		return usagef("-precision: %v", err)
	}
	if c.Ps, err = parseInts(*ps, 1); err != nil {
		return usagef("-p: %v", err)
	}
	if c.Ks, err = parseInts(*ks, 1); err != nil {
		return usagef("-k: %v", err)
	}
	if *quick {
		c.N, c.Ps, c.Ks, c.Reps, c.FallbackReps, c.Probe = 300, []int{4}, []int{10}, 1, 1, 20*time.Millisecond
	}
	switch {
	case c.N < 2:
		return usagef("-n %d: want at least 2", c.N)
	case c.Reps < 1:
		return usagef("-reps %d: want at least 1", c.Reps)
	case c.FallbackReps < 0:
		return usagef("-fallback-reps %d: want 0 or more", c.FallbackReps)
	case c.Workers < 1:
		return usagef("-workers %d: want at least 1", c.Workers)
	case c.BlockSize < 1:
		return usagef("-tile %d: want at least 1", c.BlockSize)
	case c.Probe <= 0:
		return usagef("-probe %v: want a positive duration", c.Probe)
	}
	if checkOnly(ctx) {
		return nil
	}
	return runBench(ctx, c, stdout, stderr)
}

// runBench runs the timings of c, the header on stdout once the peaks are
// known, the progress on stderr, then the table on stdout.
func runBench(ctx context.Context, c kernelbench.Settings, stdout, stderr io.Writer) error {
	c.Log = stderr
	c.Probed = func(r *kernelbench.Report) error {
		fmt.Fprintf(stdout, "ssnmf bench: n=%d workers=%d tile=%d precision=%s\n", c.N, c.Workers, c.BlockSize, c.Precision)
		return r.WriteHeader(stdout)
	}
	r, err := kernelbench.Run(ctx, c)
	if err != nil {
		return err
	}
	return r.WriteTable(stdout)
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
