package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/internal/fault"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/tile"
)

// graphCmd is the graph command: it writes the kNN graph of an input as an
// edge list, which solve -affinity reads back to the same bits.
func graphCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	kc := kernelConfig{affinity: affinityKNN, gamma: gammaFlag{auto: true}}
	fs := newFlagSet("ssnmf graph", "Usage: ssnmf graph [flags] -o EDGES.parquet|.arrow|.csv [INPUT]\n\n"+
		"Writes the kNN graph of the rows of INPUT (the built-in yeast data set if none), as\n"+
		"solve -affinity knn builds it, as an edge list: src, dst (0-based rows, src <= dst, each\n"+
		"pair once, self-loops included) and weight. solve -affinity EDGES reads it back.")
	var marks flagMarks
	weights := graphFlags(fs, &kc, &marks, "")
	fs.BoolVar(&kc.standardize, marks.needs("standardize", needFeatures), true, "z-score each feature (population std; a constant feature becomes 0)")
	fs.IntVar(&kc.run.BlockSize, marks.atLeast(1, "tile"), tile.DefaultBlockSize, "edge `B` of the distance tiles")
	fs.IntVar(&kc.run.Workers, marks.atLeast(1, "workers"), runtime.GOMAXPROCS(0), "goroutines (the default is GOMAXPROCS)")
	kernelFlagVar(fs, &kc.kernel, nil)
	fs.StringVar(&kc.format, marks.needs("format", needInput), input.Auto, "input format: "+input.Formats)
	features := fs.String("features", "", "comma-separated feature columns (default: every column but the label)")
	fs.StringVar(&kc.label, "label", "", "the label column, never a feature (default: \"label\" if present); a row whose label is missing ("+store.MissingLabels+") is refused")
	fs.BoolVar(&kc.quiet, "q", false, "no progress on stderr")
	out := fs.String("o", "", "the edge list to write, `EDGES`.parquet, .arrow or .csv")
	engineFlags(fs, &kc, &marks, func(name string) string { return name })
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if err := marks.checkRanges(fs); err != nil {
		return err
	}
	if err := kc.checkEngine(); err != nil {
		return err
	}
	kc.log = func(msg string) { fmt.Fprintln(stderr, "ssnmf: "+msg) }
	if err := kc.checkGraph(*weights); err != nil {
		return err
	}
	if err := kc.check(*features, tile.Float64.String()); err != nil {
		return err
	}
	if _, err := kc.resolveKernel(false); err != nil {
		return err
	}
	switch {
	case *out == "":
		return usagef("graph: -o EDGES.parquet is required")
	case input.TableFormat(*out) == "":
		return usagef("-o %s: unknown extension, want .parquet, .arrow or .csv", *out)
	case len(pos) > 1:
		return usagef("graph takes at most one INPUT, have %d: %s", len(pos), strings.Join(pos, " "))
	case len(pos) == 1:
		kc.input = pos[0]
	}
	if err := marks.checkApplies(givenFlags(fs), scope{affinity: affinityKNN, input: kc.input != "", knn: kc.knn.KNNMethod, engine: kc.engine}); err != nil {
		return err
	}
	kc.neighborsGiven = slices.Contains(givenFlags(fs), "neighbors")
	if checkOnly(ctx) {
		return nil
	}
	return kc.export(ctx, *out, stdout, kc.writeEdges(ctx, *out, time.Now(), stderr))
}

// writeEdges returns the end of the graph command begun at begin: it
// reports the graph built and writes it, in the input's order of the
// rows, to the edge list out, until ctx is done.
func (kc *kernelConfig) writeEdges(ctx context.Context, out string, begin time.Time, stderr io.Writer) func(w io.Writer, prob *problem) error {
	return func(w io.Writer, prob *problem) (err error) {
		g := prob.Graph()
		if !kc.quiet {
			total := time.Since(begin)
			fmt.Fprintf(stderr, "ssnmf: %s: n=%d %s built in %.1fs (reading %.1fs, the graph %.1fs) -> %s\n",
				kc.inputName(), g.N(), prob.Describe(), total.Seconds(), prob.Read.Seconds(), (total - prob.Read).Seconds(), out)
			fmt.Fprintf(stderr, "ssnmf: distances screened by the %s kernel (this CPU: %s)\n", cmp.Or(prob.KNN.Kernel, "portable"), tile.CPUFeatures())
		}
		// The rows were searched in the partition's order; the edges
		// name them in the input's.
		if g, err = prob.InputOrder(ctx, filepath.Join(prob.dir, "graph.input.csr")); err != nil {
			return err
		}
		if g != prob.Graph() {
			defer g.Close()
			defer fault.Catch(&err)() // names a fault before g.Close unmaps the file
		}
		if err := affinity.WriteEdges(w, g, input.TableFormat(out)); err != nil {
			return fmt.Errorf("-o %s: %w", out, err)
		}
		return nil
	}
}
