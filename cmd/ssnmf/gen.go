package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/synth"
)

// genConfig is the parsed command line of gen.
type genConfig struct {
	n, p, k int
	seed    uint64
	sep     float64
	out     string
	quiet   bool
}

func parseGen(args []string, stdout io.Writer) (*genConfig, error) {
	c := &genConfig{}
	var marks flagMarks
	fs := newFlagSet("ssnmf gen", "Usage: ssnmf gen -n N [flags] -o FILE.parquet|FILE.arrow|FILE.csv|FILE.csv.gz\n\n"+
		"Writes a seeded Gaussian mixture: k centers drawn from N(0, sep² I), and n rows, each\n"+
		"a center chosen uniformly at random plus N(0, I) noise, as float64 columns x1..xp and\n"+
		"the center's index in an int32 column label. It generates and writes 65,536 rows at a\n"+
		"time, so its memory does not grow with n; the file is renamed into place when complete.")
	fs.IntVar(&c.n, marks.atLeast(1, "n"), 0, "number of rows (required)")
	fs.IntVar(&c.p, marks.atLeast(1, "p"), 16, "number of features")
	fs.IntVar(&c.k, marks.atLeast(1, "k"), 10, "number of mixture components (classes)")
	fs.Uint64Var(&c.seed, "seed", 0, "random seed: the same seed and flags give the same values in every format")
	fs.Float64Var(&c.sep, "sep", 2, "standard deviation of the centers, in units of the noise's")
	fs.StringVar(&c.out, "o", "", "output `FILE`: .parquet, .arrow (Arrow IPC file), .csv or .csv.gz (required)")
	fs.BoolVar(&c.quiet, "q", false, "no summary line on stderr")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, usagef("gen takes no arguments, have %s (give the output with -o)", strings.Join(pos, " "))
	}
	if err := marks.checkRanges(fs); err != nil {
		return nil, err
	}
	switch {
	case !(c.sep >= 0) || c.sep > 1e150:
		return nil, usagef("-sep must be a number >= 0, have %v", c.sep)
	case c.out == "":
		return nil, usagef("-o FILE is required")
	case synth.Format(c.out) == "":
		return nil, usagef("-o %s: unknown extension, want .parquet, .arrow, .csv or .csv.gz", c.out)
	}
	return c, nil
}

// gen is the gen command.
func gen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseGen(args, stdout)
	if err != nil || checkOnly(ctx) {
		return err
	}
	out, err := createOutput(ctx, vfs.OS{}, "-o", c.out, stdout)
	if err != nil {
		return err
	}
	defer out.Abort()
	s := synth.Settings{N: c.n, P: c.p, K: c.k, Sep: c.sep, Seed: c.seed}
	if err := synth.Write(ctx, out, synth.Format(c.out), s); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err // interrupted after N rows: not a fault of the file
		}
		return fmt.Errorf("-o %s: %w", c.out, err)
	}
	if err := out.Commit(); err != nil {
		return err
	}
	if !c.quiet {
		fmt.Fprintf(stderr, "ssnmf gen: wrote %s: n=%d p=%d k=%d sep=%g seed=%d\n", c.out, c.n, c.p, c.k, c.sep, c.seed)
	}
	return nil
}
