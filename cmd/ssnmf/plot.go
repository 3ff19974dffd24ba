package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ssnmf/ssnmf/figure"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/trace"
)

// plotCmd is the plot command: it draws one or more -trace files of solve
// into one panel, a curve per file, as PNG or SVG.
func plotCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlagSet("ssnmf plot", "Usage: ssnmf plot [flags] -o FILE.png|FILE.svg TRACE.csv ...\n\n"+
		"Draws the traces written by \"ssnmf solve -trace\", one curve per file, labeled by the\n"+
		"file's name. On logarithmic axes (the default) points with a coordinate <= 0 are left\n"+
		"out, such as iteration 0 or the last point of -y excess.")
	out := fset.String("o", "", "output `FILE`, .png or .svg (required)")
	xcol := fset.String("x", trace.Seconds, "x axis: seconds, passes or iter")
	ycol := fset.String("y", trace.Objective, "y axis: objective, gap, excess (f minus the trace's smallest f) or step_size")
	linear := fset.Bool("linear", false, "linear axes instead of logarithmic")
	title := fset.String("title", "", "title of the plot")
	pos, err := parseFlags(fset, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case *out == "":
		return usagef("plot: -o FILE.png or FILE.svg is required")
	case len(pos) == 0:
		return usagef("plot: no TRACE.csv given")
	case !slices.Contains([]string{trace.Seconds, trace.Passes, trace.Iter}, *xcol):
		return usagef("plot: -x %q: want seconds, passes or iter", *xcol)
	case !slices.Contains([]string{trace.Objective, trace.Gap, trace.Excess, trace.StepSize}, *ycol):
		return usagef("plot: -y %q: want objective, gap, excess or step_size", *ycol)
	}
	format, err := figure.Format(*out)
	if err != nil {
		return usagef("plot: -o %v", err)
	}
	if checkOnly(ctx) {
		return nil
	}
	traces := make([]store.NamedFile, len(pos))
	for i, p := range pos {
		traces[i] = store.NamedFile{Name: "TRACE", Path: p}
	}
	if err := checkFiles(traces, []store.NamedFile{{Name: "-o", Path: *out}}); err != nil {
		return err
	}
	f, err := createOutput(ctx, vfs.OS{}, "-o", *out, stdout)
	if err != nil {
		return err
	}
	defer f.Abort()
	panel := figure.Panel{Title: *title, XLabel: *xcol, YLabel: *ycol, LogX: !*linear, LogY: !*linear}
	if *ycol == trace.Excess {
		panel.YLabel = "f - f* (f* = the trace's smallest f)"
	}
	for _, path := range pos {
		if err := ctx.Err(); err != nil {
			return err
		}
		tr, err := trace.ReadFile(path)
		if err != nil {
			return usageError{err} // as solve treats its input
		}
		s, err := figure.TraceSeries(tr, *xcol, *ycol)
		if err != nil {
			return err
		}
		panel.Series = append(panel.Series, s)
	}
	fig := &figure.Figure{Panels: []figure.Panel{panel}}
	if err := fig.Render(f, format); err != nil {
		return fmt.Errorf("-o %s: %w", *out, err)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "ssnmf: plot: wrote %s (%d traces: %s)\n", *out, len(pos), strings.Join(pos, ", "))
	return nil
}
