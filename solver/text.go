package solver

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/internal/diskio"
)

// WriteText writes the summary as ssnmf solve prints it: a table of the
// input, P, the clusters, the objective and gap, how the run stopped, its
// times and storage I/O and, given the labels, the scores.
func (s *Summary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...) }
	s.writeAffinity(row)
	row("clusters", "%d (method %s)", s.K, s.Method)
	if s.InitRule != "" {
		row("init", "%s (auto: %s)", s.Init, s.InitRule)
	}
	if sp := s.Spectral; sp != nil {
		files := ""
		if sp.ScratchFileBytes > 0 {
			files = fmt.Sprintf(", %s of its blocks and coarse graphs in scratch files", diskio.Size(sp.ScratchFileBytes))
		}
		row("spectral", "eigenvalues %s; %d components, eigengap %.3g; largest residual %.2g; %d passes over P, %.2fs%s",
			sp.FormatEigenvalues(), sp.Components, float64(sp.Eigengap), slices.Max(sp.Residuals), sp.Passes, sp.Seconds, files)
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
		row("engine", "%s: %d step(s) of %d tasks (%d retried), %.2fs in them: %s", s.Engine, s.Steps, s.Tasks, s.StepRetries, s.StepSeconds, s.stepsDid())
	}
	row("||P||_F^2", "%.8g (max row sum %.6g)", s.PFrobeniusSq, s.PMaxRowSum)
	s.writeScores(row)
	sizes := make([]string, len(s.Sizes))
	for c, m := range s.Sizes {
		sizes[c] = strconv.Itoa(m)
	}
	row("cluster sizes", "%s", strings.Join(sizes, " "))
	return tw.Flush()
}

// writeAffinity writes the rows of the input and of P: the Gaussian
// kernel's, the kNN graph's (Neighbors set) or a file's (AffinityKind set).
func (s *Summary) writeAffinity(row func(k, format string, args ...any)) {
	switch {
	case s.AffinityKind != "":
		row("input", "%s (n=%d)", s.Input, s.N)
		row("affinity", "%s %s", s.AffinityKind, s.Affinity)
		if s.ScaleRule != "" {
			row("scale", "%.4g (%s)", s.Scale, s.ScaleRule)
		}
	case s.Neighbors > 0:
		row("input", "%s (n=%d, p=%d)", s.Input, s.N, s.P)
		row("affinity", "kNN graph: %d neighbours, %s weights, %d entries, scale %.4g (%s), standardize=%v", s.Neighbors, s.Weights, s.GraphEntries, s.Scale, s.ScaleRule, s.Standardize)
		if s.KNN == graph.Approximate.String() {
			row("kNN search", "%s", s.search)
		}
	default:
		row("input", "%s (n=%d, p=%d)", s.Input, s.N, s.P)
		row("kernel", "gamma=%.6g (%s), standardize=%v, %s", s.Gamma, s.GammaRule, s.Standardize, s.Kernel)
	}
}

// stepsDid says what ran in the steps of -engine slurm.
func (s *Summary) stepsDid() string {
	switch {
	case s.Neighbors > 0 && s.KNN == graph.Approximate.String():
		return "the kNN search's rounds of leaf pairs; the partition, descent, the recall, the graph and the solve ran here"
	case s.Neighbors > 0:
		return "the kNN search; the solve ran here"
	}
	return "the passes of P"
}

// writeScores writes the rows of the scores against the labels, if any.
func (s *Summary) writeScores(row func(k, format string, args ...any)) {
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
}

// FormatEigenvalues returns the eigenvalues as "1 0.99984 0.99871".
func (r *SpectralReport) FormatEigenvalues() string {
	s := make([]string, len(r.Eigenvalues))
	for i, v := range r.Eigenvalues {
		s[i] = strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strings.Join(s, " ")
}
