package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ssnmf/ssnmf/store/tilefile"
	"github.com/ssnmf/ssnmf/tile"
)

// tiles is the tiles command: it writes the Gaussian kernel of an input as
// a tile file, for solve -affinity.
func tiles(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var kc kernelConfig
	fs := newFlagSet("ssnmf tiles", "Usage: ssnmf tiles [flags] -o FILE.arrow [INPUT]\n\n"+
		"Writes the upper-triangular tiles of P_ij = exp(-gamma ||x_i - x_j||²) over the rows of INPUT\n"+
		"(the built-in yeast data set if none) to an Arrow IPC tile file, which ssnmf solve -affinity\n"+
		"reads instead of generating P. The file takes 4·n²/2 bytes in float32, 8·n²/2 in float64.")
	var marks flagMarks
	features, precision := kernelFlags(fs, &kc, &marks)
	fs.BoolVar(&kc.quiet, "q", false, "no progress on stderr")
	out := fs.String("o", "", "the tile file to write, `FILE.arrow`")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if err := marks.checkRanges(fs); err != nil {
		return err
	}
	if err := kc.check(*features, *precision); err != nil {
		return err
	}

	switch {
	case *out == "":
		return usagef("tiles: -o FILE.arrow is required")
	case len(pos) > 1:
		return usagef("tiles takes at most one INPUT, have %d", len(pos))
	case len(pos) == 1:
		kc.input = pos[0]
	}
	if err := marks.checkApplies(givenFlags(fs), scope{affinity: affinityGaussian, input: kc.input != "", engine: engineLocal}); err != nil {
		return err
	}
	if checkOnly(ctx) {
		return nil
	}
	return kc.export(ctx, *out, stdout, func(w io.Writer, prob *problem) error {
		opt := tilefile.Options{Block: kc.run.BlockSize, Float32: kc.run.Precision == tile.Float32, Workers: kc.run.Workers,
			Meta: map[string]string{"kernel": "gaussian", "gamma": fmt.Sprint(prob.Gamma), "gamma_rule": prob.GammaRule,
				"standardize": fmt.Sprint(kc.standardize), "input": kc.inputName()}}
		if !kc.quiet {
			fmt.Fprintf(stderr, "ssnmf: %s: n=%d %s tile=%d -> %s\n", kc.inputName(), prob.N(), prob.Describe(), kc.run.BlockSize, *out)
			begin, last := time.Now(), time.Now()
			opt.Progress = func(done, total int) {
				if time.Since(last) >= passProgressEvery || done == total {
					last = time.Now()
					fmt.Fprintf(stderr, "  %d of %d tiles  %.1fs\n", done, total, time.Since(begin).Seconds())
				}
			}
		}
		return tilefile.Write(ctx, w, prob.Engine.Source, opt)
	})
}
