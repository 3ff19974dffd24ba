package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/internal/diskio"
	"github.com/ssnmf/ssnmf/score"
	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/store"
)

// summaryBuilder gathers the outcome of a run, start by start, and makes of
// it the summary, the result table and the -out and -summary files.
type summaryBuilder struct {
	cfg    *config
	prob   *problem
	kernel string        // the tile kernel's name
	setup  float64       // the seconds of loading the input and setting P up
	meter  *solver.Meter // counts and times every pass of the run
	warn   io.Writer     // warnings: a score that cannot be computed

	run   *solver.Run // the solve: its starts, the best and what its methods report
	sum   summary     // made by finish
	sizes []int       // rows per cluster of the final W, by largest membership; made by finish
}

// summary is the JSON document of -summary.
type summary struct {
	Input       string  `json:"input"`
	N           int     `json:"n"`
	P           int     `json:"p"`
	K           int     `json:"k"`
	Method      string  `json:"method"`
	Step        string  `json:"step"`
	Init        string  `json:"init"`
	Gamma       float64 `json:"gamma"`
	GammaRule   string  `json:"gamma_rule"`
	Standardize bool    `json:"standardize"`
	Seed        uint64  `json:"seed"`
	Workers     int     `json:"workers"`
	Tile        int     `json:"tile"`
	Kernel      string  `json:"kernel"`
	// KernelFamily is the family of vector kernels that ran (-kernel,
	// resolved), KNNKernel the kernel of the kNN search's screen where
	// one ran, and CheckpointKernelFamily the family of the checkpoint's
	// run where a resumed run ran another.
	KernelFamily           string  `json:"kernel_family"`
	KNNKernel              string  `json:"knn_kernel,omitempty"`
	CheckpointKernelFamily string  `json:"checkpoint_kernel_family,omitempty"`
	Tol                    float64 `json:"tol"`
	Ftol                   float64 `json:"ftol"`
	Rtol                   float64 `json:"rtol"`
	Mtol                   float64 `json:"mtol"`
	Frtol                  float64 `json:"frtol"`
	MaxTimeSeconds         float64 `json:"max_time_seconds,omitempty"`
	MaxIter                int     `json:"max_iter"`
	Refresh                int     `json:"refresh"`
	Iterations             int     `json:"iterations"`
	Passes                 int     `json:"passes"`
	Objective              float64 `json:"objective"`
	Gap                    float64 `json:"gap"`
	ModelTerm              float64 `json:"model_term"`
	Converged              bool    `json:"converged"`
	StopReason             string  `json:"stop_reason"`
	Seconds                float64 `json:"seconds"`
	SolveSeconds           float64 `json:"solve_seconds"`
	EntriesPerSecond       float64 `json:"entries_per_second"`
	PassSeconds            float64 `json:"pass_seconds"`     // the mean time of a pass over P
	AffinitySeconds        float64 `json:"affinity_seconds"` // the time to load the input and set P up (a kNN graph's search)
	PFrobeniusSq           float64 `json:"p_frobenius_sq"`
	PMaxRowSum             float64 `json:"p_max_row_sum"`
	Precision              string  `json:"precision"`
	Affinity               string  `json:"affinity,omitempty"`
	AffinityKind           string  `json:"affinity_kind,omitempty"` // -affinity FILE: "tile file" or "edge list"
	Neighbors              int     `json:"neighbors,omitempty"`     // -affinity knn
	Weights                string  `json:"weights,omitempty"`       // -affinity knn
	GraphEntries           int64   `json:"graph_entries,omitempty"` // -affinity knn: stored entries of P
	// -affinity knn: the search ("exact" or "approx"), and for approx
	// its rounds and the recall@M measured on RecallRows sampled rows
	// (absent when not measured, or when the graph was reused).
	KNN            string         `json:"knn,omitempty"`
	KNNRounds      int            `json:"knn_rounds,omitempty"`
	KNNRecall      *float64       `json:"knn_recall,omitempty"`
	KNNRecallRows  int            `json:"knn_recall_rows,omitempty"`
	Scale          float64        `json:"scale,omitempty"` // a sparse P: the factor of its stored values
	ScaleRule      string         `json:"scale_rule,omitempty"`
	ResumedAt      int            `json:"resumed_at,omitempty"`
	Starts         []solver.Start `json:"starts,omitempty"`
	BestStart      int            `json:"best_start"`
	KmeansInertias []float64      `json:"kmeans_inertias,omitempty"` // -method kmeans: the inertia of every start
	// The penalty method's final point is not feasible: how far it is, and
	// the objective and gap of its projection onto the constraints.
	RowSumViolation    *float64 `json:"row_sum_violation,omitempty"`
	MinEntry           *float64 `json:"min_entry,omitempty"`
	ProjectedObjective *float64 `json:"projected_objective,omitempty"`
	ProjectedGap       *float64 `json:"projected_gap,omitempty"`
	PeakRSSBytes       int64    `json:"peak_rss_bytes,omitempty"` // the process's peak resident set size
	// IO is the run's storage I/O by phase, where the system counts it
	// (package diskio): the -out, -summary and -trace files are written
	// after it and are not in it.
	IO *ioReport `json:"io,omitempty"`
	// Memory is the run's memory budget and its shares.
	Memory   solver.Budget `json:"memory"`
	Classes  int           `json:"classes,omitempty"`
	ARI      *float64      `json:"ari,omitempty"`
	NMI      *float64      `json:"nmi,omitempty"`
	Accuracy *float64      `json:"accuracy,omitempty"`
	// The memberships' calibration against the labels (score.Calibrate):
	// the mean largest membership of the points clustered right and
	// wrong, and the Brier score.
	ConfidenceCorrect *float64 `json:"confidence_correct,omitempty"`
	ConfidenceWrong   *float64 `json:"confidence_wrong,omitempty"`
	Brier             *float64 `json:"brier,omitempty"`
	// -engine slurm: the tasks of a step, the steps launched (retries
	// included), the retries, and the seconds in the steps.
	Engine      string  `json:"engine"`
	Tasks       int     `json:"tasks,omitempty"`
	Steps       int     `json:"steps,omitempty"`
	StepRetries int     `json:"step_retries,omitempty"`
	StepSeconds float64 `json:"step_seconds,omitempty"`
	// Spectral is the report of the graph's spectral embedding, where
	// -init spectral or -method spectral computed it.
	Spectral *solver.SpectralReport `json:"spectral,omitempty"`
}

// formatValues returns eigenvalues as "1 0.99984 0.99871".
func formatValues(vals []float64) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strings.Join(s, " ")
}

// finish fills the summary and the cluster sizes of the run's result res,
// which took seconds in all and ended at w, scoring the clusters against
// the labels if any.
// A measure that cannot be computed is left out of the summary, with a
// warning.
func (b *summaryBuilder) finish(res *fw.Result, seconds float64, w []float64) {
	c, pr := b.cfg, b.prob
	b.sum = summary{
		Input: c.inputName(), N: pr.N(), K: c.k,
		Method: c.method, Step: c.step.String(), Init: c.init,
		Gamma: pr.Gamma, GammaRule: pr.GammaRule, Standardize: c.standardize,
		Seed: c.seed, Workers: c.workers, Tile: c.block, Kernel: b.kernel, Precision: c.precision.String(),
		KernelFamily: c.isa.String(), KNNKernel: pr.KNN.Kernel, CheckpointKernelFamily: c.checkpointKernel,
		Affinity: c.affinity, ResumedAt: b.run.ResumedAt, BestStart: b.run.Best,
		Tol: c.tol, Ftol: c.ftol, Rtol: c.rtol, Mtol: c.mtol, Frtol: c.frtol, MaxTimeSeconds: c.maxTime.Seconds(), MaxIter: c.maxIter, Refresh: c.refresh,
		Iterations: res.Iterations, Passes: res.Passes,
		Objective: res.Objective, Gap: res.Gap, ModelTerm: res.Model,
		Converged: res.Status.Converged(), StopReason: res.Status.String(),
		Seconds: seconds, SolveSeconds: res.Runtime.Seconds(),
		PFrobeniusSq: res.FrobSq, PMaxRowSum: res.MaxRowSum, AffinitySeconds: b.setup,
	}
	b.sum.PeakRSSBytes, b.sum.Memory = peakRSS(), c.budget
	b.sum.Spectral = b.run.Spectral
	b.sum.Engine = c.engine
	if co := pr.coord; co != nil {
		b.sum.Tasks, b.sum.Steps, b.sum.StepRetries, b.sum.StepSeconds = co.Tasks, co.Stats.Steps, co.Stats.Retries, co.Stats.Time.Seconds()
	}
	if c.fromFile() {
		b.sum.AffinityKind = "tile file"
		if g := pr.Graph(); g != nil {
			b.sum.AffinityKind, b.sum.GraphEntries = "edge list", g.NNZ()
		}
	}
	if c.affinity == affinityKNN {
		b.sum.Neighbors, b.sum.Weights, b.sum.GraphEntries = min(c.neighbors, pr.N()), c.weights.String(), int64(pr.Entries())
		st := pr.KNN
		b.sum.KNN, b.sum.KNNRounds = st.Method.String(), len(st.Rounds)
		if st.RecallRows > 0 {
			b.sum.KNNRecall, b.sum.KNNRecallRows = &st.Recall, st.RecallRows
		}
	}
	if pr.ScaleRule != "" {
		b.sum.Scale, b.sum.ScaleRule = pr.Scale, pr.ScaleRule
	}
	if km := b.run.KMeans; km != nil {
		b.sum.StopReason, b.sum.Converged = "kmeans-max-iter", false
		if km.Converged {
			b.sum.StopReason = "kmeans-converged"
		}
		b.sum.KmeansInertias = km.Inertias
	}
	if pr.Table != nil {
		b.sum.P = pr.Table.P
	}
	if len(b.run.Starts) > 1 {
		b.sum.Starts = b.run.Starts
	}
	if p := b.run.Penalty; p != nil {
		b.sum.RowSumViolation, b.sum.MinEntry = &p.MaxRowSumError, &p.MinEntry
		b.sum.ProjectedObjective, b.sum.ProjectedGap = &p.ProjectedObjective, &p.ProjectedGap
	}
	if t := b.meter; t != nil && t.Passes > 0 {
		b.sum.EntriesPerSecond = entriesPerSecond(pr.Entries(), t.Elapsed/time.Duration(t.Passes))
		b.sum.PassSeconds = (t.Elapsed / time.Duration(t.Passes)).Seconds()
	}
	b.score(w)

}

// score counts the clusters' sizes of W and, given the labels, scores W
// against them: ARI, NMI, accuracy and the calibration.
func (b *summaryBuilder) score(w []float64) {
	c, pr := b.cfg, b.prob
	pred := make([]int, pr.N())
	b.sizes = make([]int, c.k)
	for i := range pred {
		pred[i] = store.Argmax(w[i*c.k : (i+1)*c.k])
		b.sizes[pred[i]]++
	}
	if pr.Table == nil || pr.Table.Labels == nil {
		return
	}
	b.sum.Classes = len(pr.Table.Classes)
	for _, m := range []struct {
		name string
		fn   func(truth, pred []int) (float64, error)
		dst  **float64
	}{{"ARI", score.ARI, &b.sum.ARI}, {"NMI", score.NMI, &b.sum.NMI}, {"accuracy", score.Accuracy, &b.sum.Accuracy}} {
		v, err := m.fn(pr.Table.Labels, pred)
		if err != nil {
			fmt.Fprintf(b.warn, "ssnmf: warning: %s not computed: %v\n", m.name, err)
			continue
		}
		*m.dst = &v
	}
	cal, err := score.Calibrate(pr.Table.Labels, w, c.k)
	if err != nil {
		fmt.Fprintf(b.warn, "ssnmf: warning: calibration not computed: %v\n", err)
		return
	}
	b.sum.Brier = &cal.Brier
	if !math.IsNaN(cal.ConfidentCorrect) {
		b.sum.ConfidenceCorrect = &cal.ConfidentCorrect
	}
	if !math.IsNaN(cal.ConfidentWrong) {
		b.sum.ConfidenceWrong = &cal.ConfidentWrong
	}
}

// write writes -out and -summary into their temporary files; the trace has
// been written as the run went.
func (b *summaryBuilder) write(o *outputs, w []float64) error {
	c := b.cfg
	if o.out != nil {
		if err := writeMemberships(o.out, c.out, w, b.prob.N(), c.k); err != nil {
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
	if sp := s.Spectral; sp != nil {
		row("spectral", "eigenvalues %s; largest residual %.2g; %d passes over P, %.2fs", formatValues(sp.Eigenvalues), slices.Max(sp.Residuals), sp.Passes, sp.Seconds)
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
	sizes := make([]string, len(b.sizes))
	for c, m := range b.sizes {
		sizes[c] = strconv.Itoa(m)
	}
	row("cluster sizes", "%s", strings.Join(sizes, " "))
	tw.Flush()
}

// ioReport is the summary's record of the run's storage I/O: its totals
// and its phases, in order (input, each kNN round, affinity, scale,
// solve, model).
type ioReport struct {
	ReadBytes    int64          `json:"read_bytes"`
	WrittenBytes int64          `json:"written_bytes"`
	Phases       []diskio.Phase `json:"phases"`
}

// newIOReport returns the report of the phases m recorded, nil if it
// recorded none.
func newIOReport(m *diskio.Meter) *ioReport {
	if len(m.Phases()) == 0 {
		return nil
	}
	t := m.Total()
	return &ioReport{ReadBytes: t.Read, WrittenBytes: t.Written, Phases: m.Phases()}
}

// String formats the report for the result table: the totals, then each
// phase's bytes read and written, the kNN rounds taken together.
func (r *ioReport) String() string {
	var parts []string
	var rounds diskio.Phase
	nr := 0
	for _, p := range r.Phases {
		if strings.HasPrefix(p.Name, "kNN round ") {
			rounds.Read, rounds.Written, nr = rounds.Read+p.Read, rounds.Written+p.Written, nr+1
			continue
		}
		if nr > 0 {
			parts = append(parts, fmt.Sprintf("%d kNN rounds %s/%s", nr, diskio.Size(rounds.Read), diskio.Size(rounds.Written)))
			nr = 0
		}
		parts = append(parts, fmt.Sprintf("%s %s/%s", p.Name, diskio.Size(p.Read), diskio.Size(p.Written)))
	}
	return fmt.Sprintf("read %s, wrote %s (read/written: %s)", diskio.Size(r.ReadBytes), diskio.Size(r.WrittenBytes), strings.Join(parts, ", "))
}
