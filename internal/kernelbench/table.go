package kernelbench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/tile"
)

// WriteHeader writes the CPU, the kernel families and their FMA peaks: the
// head of the table, known before any pass is timed (see Settings.Probed).
// An error writing is returned as w gives it, naming its file.
func (r *Report) WriteHeader(w io.Writer) error {
	var names, denseNames []string
	for _, f := range r.Families {
		names = append(names, f.ISA.String())
		if hasDense(f.ISA) {
			denseNames = append(denseNames, f.ISA.String())
		}
	}
	if r.CPU != "" {
		fmt.Fprintf(w, "cpu: %s (%s)\n", r.CPU, r.Features)
	} else {
		fmt.Fprintf(w, "cpu: %s\n", r.Features)
	}
	fmt.Fprintf(w, "kernels: %s (go: the portable kernel, the baseline); dense passes (gen, P·S, P·W): %s\n\n",
		strings.Join(names, ", "), strings.Join(denseNames, ", "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "kernel\tFMA peak flop/s\tprobe (%d workers, %v)\n", r.Settings.Workers, r.Settings.Probe)
	for _, f := range r.Families {
		fmt.Fprintf(tw, "%s\t%.3g\t%s\n", f.ISA, f.Peak, f.Probe)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

// WriteTable writes the rates, speed-ups over go and shares of the FMA
// peak of the rows, a footnote for each family missing a kernel, the
// table's legend, and the kNN build's rate as a share of the P·S pass's.
// An error writing is returned as w gives it, naming its file.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "p\tk\tpass\tkernel\tentries/s\tspeed-up\t% of FMA peak\t")
	missing := map[tile.ISA]bool{}
	for _, row := range r.Rows {
		k := "-"
		if row.K > 0 {
			k = strconv.Itoa(row.K)
		}
		base := row.Rate[tile.ISAGo]
		for _, f := range r.Families {
			v, up, frac := "-", "-", "-"
			switch rate := row.Rate[f.ISA]; {
			case rate == NoKernel:
				v, missing[f.ISA] = "-*", true
			case rate > 0:
				v = fmt.Sprintf("%.3g", rate)
				// Only the upper triangle is generated: n²/2 entries per pass.
				frac = percent(100 * rate / 2 * row.FlopsPerEntry / f.Peak)
				if f.ISA != tile.ISAGo && base > 0 {
					up = fmt.Sprintf("%.1fx", rate/base)
				}
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.P, k, row.Pass, f.ISA, v, up, frac)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	r.writeNotes(w, missing)
	return nil
}

// writeNotes writes the footnotes of the families in missing, the legend
// and the kNN build's rates against the P·S pass's.
func (r *Report) writeNotes(w io.Writer, missing map[tile.ISA]bool) {
	for _, f := range r.Families {
		if !missing[f.ISA] {
			continue
		}
		var why []string
		if !hasDense(f.ISA) {
			why = append(why, "its dense passes (gen, P·S, P·W) are not written yet")
		}
		if !knnKernel(features(2, 1), 1, f.ISA) {
			why = append(why, "its kNN screen is not written yet")
		}
		fmt.Fprintf(w, "-* %s: %s\n", f.ISA, strings.Join(why, "; "))
	}
	fmt.Fprintf(w, "entries/s count all n² entries (the upper triangle of tiles is generated once); speed-up is\n"+
		"over go; %% of FMA peak counts 2p+24 flops per generated entry, plus 4k for P·W, and 2p for the\n"+
		"kNN build (the %d-nearest-neighbour graph, exact) and for its distance kernel alone (screen:\n"+
		"every tile, each row's threshold at its %dth nearest), against the family's own probe (go:\n"+
		"scalar FMAs); medians of %d (vector kernels) and %d (go) passes.\n",
		graph.DefaultNeighbors, graph.DefaultNeighbors, r.Settings.Reps, r.Settings.FallbackReps)
	for _, knn := range r.Rows {
		if knn.Pass != KNN {
			continue
		}
		for _, ps := range r.Rows {
			if ps.P == knn.P && ps.Pass == PS && ps.K == r.Settings.Ks[0] {
				fmt.Fprintf(w, "p=%d: kNN build at %s of the P·S pass (k=%d)\n", knn.P, ratios(knn, ps, r.Families), ps.K)
			}
		}
	}
}

// ratios formats the rates of r as fractions of those of ref, for each
// family where both are measured.
func ratios(r, ref Row, fams []Family) string {
	var out []string
	for _, f := range fams {
		if a, b := r.Rate[f.ISA], ref.Rate[f.ISA]; a > 0 && b > 0 {
			out = append(out, fmt.Sprintf("%.0f%% (%s)", 100*a/b, f.ISA))
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
