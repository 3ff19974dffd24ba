package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/internal/diskio"
	"github.com/ssnmf/ssnmf/solver"
)

// summaryBuilder makes of the outcome of a run the summary, with what the
// command adds to the run's, the result table and the -out and -summary
// files.
type summaryBuilder struct {
	cfg   *config
	prob  *problem
	setup float64   // the seconds of loading the input and setting P up
	warn  io.Writer // warnings: a score that cannot be computed

	run *solver.Run     // the solve: its starts, the best and what its methods report
	sum *solver.Summary // made by finish
}

// formatValues returns eigenvalues as "1 0.99984 0.99871".
func formatValues(vals []float64) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strings.Join(s, " ")
}

// finish makes the summary of the run's result res, which took seconds
// in all and ended at w, with what the command adds: the input's name, the
// kernels, the flag of the affinity, the engine, the memory and the times.
// A score that cannot be computed is left out, with a warning.
func (b *summaryBuilder) finish(res *fw.Result, seconds float64, w []float64) {
	c, pr := b.cfg, b.prob
	s, warnings := b.run.Summary(res, w)
	for _, err := range warnings {
		fmt.Fprintf(b.warn, "ssnmf: warning: %v\n", err)
	}
	s.Input, s.Precision, s.Affinity = c.inputName(), c.precision.String(), c.affinity
	s.KernelFamily, s.CheckpointKernelFamily = c.isa.String(), c.checkpointKernel
	s.Seconds, s.AffinitySeconds = seconds, b.setup
	s.PeakRSSBytes, s.Memory, s.Engine = peakRSS(), c.budget, c.engine
	if co := pr.coord; co != nil {
		s.Tasks, s.Steps, s.StepRetries, s.StepSeconds = co.Tasks, co.Stats.Steps, co.Stats.Retries, co.Stats.Time.Seconds()
	}
	b.sum = s
}

// write writes -out and -summary into their temporary files; the trace has
// been written as the run went.
func (b *summaryBuilder) write(o *outputs, w []float64) error {
	c := b.cfg
	if o.out != nil {
		if err := writeMemberships(o.out, c.out, w, b.prob.N(), c.run.K); err != nil {
			return err
		}
	}
	b.sum.IO = newIOReport(c.disk)
	if o.summary != nil {
		enc := json.NewEncoder(o.summary)
		enc.SetIndent("", "  ")
		if err := enc.Encode(b.sum); err != nil {
			return fmt.Errorf("-summary %s: %w", c.summary, err)
		}
	}
	return nil
}

// table prints the human-readable result, after finish.
func (b *summaryBuilder) table(out io.Writer) {
	s := b.sum
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...) }
	switch s.Affinity {
	case "", affinityGaussian:
		row("input", "%s (n=%d, p=%d)", s.Input, s.N, s.P)
		row("kernel", "gamma=%.6g (%s), standardize=%v, %s", s.Gamma, s.GammaRule, s.Standardize, s.Kernel)
	case affinityKNN:
		row("input", "%s (n=%d, p=%d)", s.Input, s.N, s.P)
		row("affinity", "kNN graph: %d neighbours, %s weights, %d entries, scale %.4g (%s), standardize=%v", s.Neighbors, s.Weights, s.GraphEntries, s.Scale, s.ScaleRule, s.Standardize)
		if s.KNN == graph.Approximate.String() {
			row("kNN search", "%s", b.prob.DescribeSearch())
		}
	default:
		row("input", "%s (n=%d)", s.Input, s.N)
		row("affinity", "%s %s", s.AffinityKind, s.Affinity)
		if s.ScaleRule != "" {
			row("scale", "%.4g (%s)", s.Scale, s.ScaleRule)
		}
	}
	row("clusters", "%d (method %s)", s.K, s.Method)
	if s.InitRule != "" {
		row("init", "%s (auto: %s)", s.Init, s.InitRule)
	}
	if sp := s.Spectral; sp != nil {
		row("spectral", "eigenvalues %s; %d components, eigengap %.3g; largest residual %.2g; %d passes over P, %.2fs",
			formatValues(sp.Eigenvalues), sp.Components, float64(sp.Eigengap), slices.Max(sp.Residuals), sp.Passes, sp.Seconds)
	}
	row("objective", "%.10g", s.Objective)
	if len(s.Starts) > 1 {
		fs := make([]string, len(s.Starts))
		for i, st := range s.Starts {
			fs[i] = fmt.Sprintf("%.8g", st.Objective)
		}
		row("starts", "%d, the least objective chosen: start %d (%s)", len(s.Starts), s.BestStart, strings.Join(fs, ", "))
	}
	row("fw gap", "%.4g (%.3g of the objective, %.3g of ¼||WᵀW||² = %.6g)", s.Gap, s.Gap/s.Objective, s.Gap/s.ModelTerm, s.ModelTerm)
	row("stopped", "%s after %d iterations, %d passes over P", s.StopReason, s.Iterations, s.Passes)
	row("time", "%.2fs (%.3g entries/s per pass)", s.Seconds, s.EntriesPerSecond)
	if s.IO != nil {
		row("storage I/O", "%s", s.IO)
	} else {
		row("storage I/O", "not counted on this system (no /proc/self/io)")
	}
	if s.Steps > 0 {
		what := "the passes of P"
		switch {
		case s.Neighbors > 0 && s.KNN == graph.Approximate.String():
			what = "the kNN search's rounds of leaf pairs; the partition, descent, the recall, the graph and the solve ran here"
		case s.Neighbors > 0:
			what = "the kNN search; the solve ran here"
		}
		row("engine", "%s: %d step(s) of %d tasks (%d retried), %.2fs in them: %s", s.Engine, s.Steps, s.Tasks, s.StepRetries, s.StepSeconds, what)
	}
	row("||P||_F^2", "%.8g (max row sum %.6g)", s.PFrobeniusSq, s.PMaxRowSum)
	if s.ARI != nil && s.NMI != nil {
		acc := "-"
		if s.Accuracy != nil {
			acc = fmt.Sprintf("%.4f", *s.Accuracy)
		}
		row("vs labels", "ARI %.4f  NMI %.4f  accuracy %s (%d classes)", *s.ARI, *s.NMI, acc, s.Classes)
	}
	if s.Brier != nil {
		conf := func(v *float64) string {
			if v == nil {
				return "-"
			}
			return fmt.Sprintf("%.3f", *v)
		}
		row("calibration", "mean largest membership %s right, %s wrong; Brier %.4f", conf(s.ConfidenceCorrect), conf(s.ConfidenceWrong), *s.Brier)
	}
	sizes := make([]string, len(s.Sizes))
	for c, m := range s.Sizes {
		sizes[c] = strconv.Itoa(m)
	}
	row("cluster sizes", "%s", strings.Join(sizes, " "))
	tw.Flush()
}

// newIOReport returns the report of the phases m recorded, nil if it
// recorded none.
func newIOReport(m *diskio.Meter) *solver.IOReport {
	if len(m.Phases()) == 0 {
		return nil
	}
	t := m.Total()
	return &solver.IOReport{ReadBytes: t.Read, WrittenBytes: t.Written, Phases: m.Phases()}
}
