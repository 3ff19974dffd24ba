package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/kmeans"
	"github.com/ssnmf/ssnmf/score"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/parquetio"
)

// Progress lines: at most one per progressEvery for iterations, and one per
// passProgressEvery within a long tile pass.
const (
	progressEvery     = time.Second
	passProgressEvery = 5 * time.Second
)

// report gathers what a run prints and writes.
type report struct {
	cfg         *config
	prob        *problem
	kernel      string    // the tile kernel's name
	out         io.Writer // progress
	n           int
	trace       io.Writer // -trace, written as the run goes; nil if not asked for
	traceAll    []byte    // the trace so far, for checkpoints
	start       int       // the current start (0-based)
	starts      []startResult
	bestStart   int
	resumedAt   int               // the iteration a resumed run went on from
	penalty     *fw.PenaltyResult // the penalty method's result of the current start
	kmeans      *kmeans.Result    // -method kmeans's clustering
	bestPenalty *fw.PenaltyResult // of the best start
	timer       *passTimer        // times every tile pass of the run
	lastLine    time.Time         // when the last progress line was printed
	passStart   time.Time         // when the current tile pass began
	res         *fw.Result
	seconds     float64
	sum         summary
	sizes       []int // rows per cluster of the final W, by largest membership
}

// startResult is the outcome of one start of a run with -restarts.
type startResult struct {
	Seed       uint64  `json:"seed"`
	Objective  float64 `json:"objective"`
	Gap        float64 `json:"gap"`
	Iterations int     `json:"iterations"`
}

// summary is the JSON document of -summary.
type summary struct {
	Input            string        `json:"input"`
	N                int           `json:"n"`
	P                int           `json:"p"`
	K                int           `json:"k"`
	Method           string        `json:"method"`
	Step             string        `json:"step"`
	Init             string        `json:"init"`
	Gamma            float64       `json:"gamma"`
	GammaRule        string        `json:"gamma_rule"`
	Standardize      bool          `json:"standardize"`
	Seed             uint64        `json:"seed"`
	Workers          int           `json:"workers"`
	Tile             int           `json:"tile"`
	Kernel           string        `json:"kernel"`
	Tol              float64       `json:"tol"`
	Ftol             float64       `json:"ftol"`
	MaxIter          int           `json:"max_iter"`
	Refresh          int           `json:"refresh"`
	Iterations       int           `json:"iterations"`
	Passes           int           `json:"passes"`
	Objective        float64       `json:"objective"`
	Gap              float64       `json:"gap"`
	Converged        bool          `json:"converged"`
	StopReason       string        `json:"stop_reason"`
	Seconds          float64       `json:"seconds"`
	SolveSeconds     float64       `json:"solve_seconds"`
	EntriesPerSecond float64       `json:"entries_per_second"`
	PFrobeniusSq     float64       `json:"p_frobenius_sq"`
	PMaxRowSum       float64       `json:"p_max_row_sum"`
	Precision        string        `json:"precision"`
	Affinity         string        `json:"affinity,omitempty"`
	ResumedAt        int           `json:"resumed_at,omitempty"`
	Starts           []startResult `json:"starts,omitempty"`
	BestStart        int           `json:"best_start"`
	KmeansInertias   []float64     `json:"kmeans_inertias,omitempty"` // -method kmeans: the inertia of every start
	// The penalty method's final point is not feasible: how far it is, and
	// the objective and gap of its projection onto the constraints.
	RowSumViolation    *float64 `json:"row_sum_violation,omitempty"`
	MinEntry           *float64 `json:"min_entry,omitempty"`
	ProjectedObjective *float64 `json:"projected_objective,omitempty"`
	ProjectedGap       *float64 `json:"projected_gap,omitempty"`
	PeakRSSBytes       int64    `json:"peak_rss_bytes,omitempty"` // the process's peak resident set size
	Classes            int      `json:"classes,omitempty"`
	ARI                *float64 `json:"ari,omitempty"`
	NMI                *float64 `json:"nmi,omitempty"`
	Accuracy           *float64 `json:"accuracy,omitempty"`
}

// entriesPerSecond is the rate of a pass over all n^2 entries of P.
func (r *report) entriesPerSecond(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(r.n) * float64(r.n) / d.Seconds()
}

// record is the solver's Recorder: it writes the trace and prints progress
// at most once a second, and always for the first and the last iteration.
func (r *report) record(it fw.Iteration) error {
	if r.timer != nil {
		r.timer.record(it)
	}
	if err := r.traceRow(it); err != nil {
		return fmt.Errorf("-trace %s: %w", r.cfg.trace, err)
	}
	if r.cfg.quiet {
		return nil
	}
	switch {
	case it.Final:
		fmt.Fprintf(r.out, "iter %6d  f %.10g  gap %.4g  stop  %.1fs\n", it.Iter, it.Objective, it.Gap, it.Elapsed.Seconds())
	case it.Iter == 0 || time.Since(r.lastLine) >= progressEvery:
		r.lastLine = time.Now()
		fmt.Fprintf(r.out, "iter %6d  f %.10g  gap %.4g  step %.4g  pass %.3fs  %.3g entries/s  %.1fs\n",
			it.Iter, it.Objective, it.Gap, it.Step, it.PassTime.Seconds(), r.entriesPerSecond(it.PassTime), it.Elapsed.Seconds())
	}
	return nil
}

// passProgress is the tile engine's Progress hook: within a pass that runs
// for long, it prints how far the pass has come every few seconds.
func (r *report) passProgress(pass string, done, total int) {
	if done == 1 {
		r.passStart = time.Now()
	}
	r.progress(fmt.Sprintf("%s pass", pass), fmt.Sprintf("of %d tiles", total), float64(done)/float64(total))
}

// sweepProgress is the row-CD sweep's Progress hook, the passProgress of a
// sweep: rows is the number of rows visited so far in the sweep, and the
// share of the sweep done is the share of the upper triangle of P that
// their strips cover.
func (r *report) sweepProgress(rows int) {
	if rows == 0 {
		r.passStart = time.Now()
		return
	}
	n, m := float64(r.n), float64(rows)
	frac := (m*n - m*(m-1)/2) / (n * (n + 1) / 2)
	r.progress("sweep", fmt.Sprintf("(%d of %d rows)", rows, r.n), frac)
}

// progress prints, at most every few seconds and not in the first few
// seconds of a pass, the share frac of the pass done, the rate in kernel
// entries per second (all n² entries of a pass counted) and the time to go.
func (r *report) progress(what, count string, frac float64) {
	now := time.Now()
	if r.cfg.quiet || now.Sub(r.lastLine) < passProgressEvery || now.Sub(r.passStart) < passProgressEvery || frac <= 0 {
		return
	}
	r.lastLine = now
	secs := now.Sub(r.passStart).Seconds()
	fmt.Fprintf(r.out, "  %s %5.1f%% %s  %.1fs  %.3g entries/s  about %.0fs to go\n",
		what, 100*frac, count, secs, frac*float64(r.n)*float64(r.n)/secs, secs/frac-secs)
}

// finish fills the summary and the cluster sizes, scoring the clusters
// against the labels if any.
// A measure that cannot be computed is left out of the summary, with a
// warning.
func (r *report) finish(w []float64) {
	c, res, pr := r.cfg, r.res, r.prob
	r.sum = summary{
		Input: c.inputName(), N: r.n, K: c.k,
		Method: c.method, Step: c.step.String(), Init: c.init,
		Gamma: pr.gamma, GammaRule: pr.gammaRule, Standardize: c.standardize,
		Seed: c.seed, Workers: c.workers, Tile: c.block, Kernel: r.kernel, Precision: c.precision.String(),
		Affinity: c.affinity, ResumedAt: r.resumedAt, BestStart: r.bestStart,
		Tol: c.tol, Ftol: c.ftol, MaxIter: c.maxIter, Refresh: c.refresh,
		Iterations: res.Iterations, Passes: res.Passes,
		Objective: res.Objective, Gap: res.Gap,
		Converged: res.Status.Converged(), StopReason: res.Status.String(),
		Seconds: r.seconds, SolveSeconds: res.Runtime.Seconds(),
		PFrobeniusSq: res.FrobSq, PMaxRowSum: res.MaxRowSum,
	}
	r.sum.PeakRSSBytes = peakRSS()
	if km := r.kmeans; km != nil {
		r.sum.StopReason, r.sum.Converged = "kmeans-max-iter", false
		if km.Converged {
			r.sum.StopReason = "kmeans-converged"
		}
		r.sum.KmeansInertias = km.Inertias
	}
	if pr.tab != nil {
		r.sum.P = pr.tab.P
	}
	if len(r.starts) > 1 {
		r.sum.Starts = r.starts
	}
	if p := r.penalty; p != nil {
		r.sum.RowSumViolation, r.sum.MinEntry = &p.MaxRowSumError, &p.MinEntry
		r.sum.ProjectedObjective, r.sum.ProjectedGap = &p.ProjectedObjective, &p.ProjectedGap
	}
	if t := r.timer; t != nil && t.passes > 0 {
		r.sum.EntriesPerSecond = r.entriesPerSecond(t.elapsed / time.Duration(t.passes))
	}
	pred := make([]int, r.n)
	r.sizes = make([]int, c.k)
	for i := range pred {
		pred[i] = store.Argmax(w[i*c.k : (i+1)*c.k])
		r.sizes[pred[i]]++
	}
	if pr.tab == nil || pr.tab.Labels == nil {
		return
	}
	r.sum.Classes = len(pr.tab.Classes)
	for _, m := range []struct {
		name string
		fn   func(truth, pred []int) (float64, error)
		dst  **float64
	}{{"ARI", score.ARI, &r.sum.ARI}, {"NMI", score.NMI, &r.sum.NMI}, {"accuracy", score.Accuracy, &r.sum.Accuracy}} {
		v, err := m.fn(pr.tab.Labels, pred)
		if err != nil {
			fmt.Fprintf(r.out, "ssnmf: warning: %s not computed: %v\n", m.name, err)
			continue
		}
		*m.dst = &v
	}
}

// write writes -out and -summary into their temporary files; the trace has
// been written as the run went.
func (r *report) write(o *outputs, w []float64) error {
	c := r.cfg
	if o.out != nil {
		write := store.WriteMembershipCSV
		switch outFormat(c.out) {
		case formatArrow:
			write = store.WriteMembershipArrow
		case formatParquet:
			write = parquetio.WriteMembership
		}
		if err := write(o.out, w, r.n, c.k); err != nil {
			return fmt.Errorf("-out %s: %w", c.out, err)
		}
	}
	if o.summary != nil {
		enc := json.NewEncoder(o.summary)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r.sum); err != nil {
			return fmt.Errorf("-summary %s: %w", c.summary, err)
		}
	}
	return nil
}

// traceHeader is the first line of a trace.
const traceHeader = "iter,seconds,objective,gap,step_size,passes,start\n"

// traceRow writes one row of the trace CSV, after the header if it is the
// first. Row t holds f and the gap at W_t, the step taken from it and the
// tile passes so far; the last row is the iterate the run stopped at (step 0).
func (r *report) traceRow(it fw.Iteration) error {
	b, row := r.traceAll, len(r.traceAll)
	if row == 0 {
		b = append(b, traceHeader...)
	}
	b = strconv.AppendInt(b, int64(it.Iter), 10)
	for _, v := range []float64{it.Elapsed.Seconds(), it.Objective, it.Gap, it.Step} {
		b = append(b, ',')
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(it.Passes), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.start), 10)
	b = append(b, '\n')
	r.traceAll = b
	if r.trace == nil {
		return nil
	}
	_, err := r.trace.Write(b[row:])
	return err
}

// restoreTrace takes up the trace of a checkpoint: it becomes the start of
// the trace of the resumed run.
func (r *report) restoreTrace(saved []byte) error {
	r.traceAll = append(r.traceAll[:0], saved...)
	if r.trace == nil || len(saved) == 0 {
		return nil
	}
	if _, err := r.trace.Write(saved); err != nil {
		return fmt.Errorf("-trace %s: %w", r.cfg.trace, err)
	}
	return nil
}

// table prints the human-readable result, after finish.
func (r *report) table(out io.Writer) {
	s := r.sum
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...) }
	if s.Affinity != "" {
		row("input", "%s (n=%d)", s.Input, s.N)
		row("affinity", "tile file %s", s.Affinity)
	} else {
		row("input", "%s (n=%d, p=%d)", s.Input, s.N, s.P)
		row("kernel", "gamma=%.6g (%s), standardize=%v, %s", s.Gamma, s.GammaRule, s.Standardize, s.Kernel)
	}
	row("clusters", "%d (method %s)", s.K, s.Method)
	row("objective", "%.10g", s.Objective)
	row("fw gap", "%.4g", s.Gap)
	row("stopped", "%s after %d iterations, %d tile passes", s.StopReason, s.Iterations, s.Passes)
	row("time", "%.2fs (%.3g entries/s per pass)", s.Seconds, s.EntriesPerSecond)
	row("||P||_F^2", "%.8g (max row sum %.6g)", s.PFrobeniusSq, s.PMaxRowSum)
	if s.ARI != nil && s.NMI != nil {
		acc := "-"
		if s.Accuracy != nil {
			acc = fmt.Sprintf("%.4f", *s.Accuracy)
		}
		row("vs labels", "ARI %.4f  NMI %.4f  accuracy %s (%d classes)", *s.ARI, *s.NMI, acc, s.Classes)
	}
	sizes := make([]string, len(r.sizes))
	for c, m := range r.sizes {
		sizes[c] = strconv.Itoa(m)
	}
	row("cluster sizes", "%s", strings.Join(sizes, " "))
	tw.Flush()
}
