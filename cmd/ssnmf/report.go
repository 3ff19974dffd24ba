package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/score"
	"github.com/ssnmf/ssnmf/store"
)

// progressEvery is the least time between two progress lines.
const progressEvery = time.Second

// report gathers what a run prints and writes.
type report struct {
	cfg     *config
	tab     *store.Table
	gamma   float64
	out     io.Writer // progress
	n       int
	trace   []fw.Iteration
	printed time.Duration // Elapsed of the last progress line
	res     *fw.Result
	seconds float64
	sum     summary
}

// summary is the JSON document of -summary.
type summary struct {
	Input            string   `json:"input"`
	N                int      `json:"n"`
	P                int      `json:"p"`
	K                int      `json:"k"`
	Method           string   `json:"method"`
	Step             string   `json:"step"`
	Init             string   `json:"init"`
	Gamma            float64  `json:"gamma"`
	GammaRule        string   `json:"gamma_rule"`
	Standardize      bool     `json:"standardize"`
	Seed             uint64   `json:"seed"`
	Workers          int      `json:"workers"`
	Tile             int      `json:"tile"`
	Kernel           string   `json:"kernel"`
	Tol              float64  `json:"tol"`
	Ftol             float64  `json:"ftol"`
	MaxIter          int      `json:"max_iter"`
	Refresh          int      `json:"refresh"`
	Iterations       int      `json:"iterations"`
	Passes           int      `json:"passes"`
	Objective        float64  `json:"objective"`
	Gap              float64  `json:"gap"`
	Converged        bool     `json:"converged"`
	StopReason       string   `json:"stop_reason"`
	Seconds          float64  `json:"seconds"`
	SolveSeconds     float64  `json:"solve_seconds"`
	EntriesPerSecond float64  `json:"entries_per_second"`
	PFrobeniusSq     float64  `json:"p_frobenius_sq"`
	PMaxRowSum       float64  `json:"p_max_row_sum"`
	Classes          int      `json:"classes,omitempty"`
	ARI              *float64 `json:"ari,omitempty"`
	NMI              *float64 `json:"nmi,omitempty"`
	Accuracy         *float64 `json:"accuracy,omitempty"`
}

func (r *report) gammaRule() string {
	if r.cfg.gamma.auto {
		return "median"
	}
	return "given"
}

// entriesPerSecond is the rate of a pass over all n^2 entries of P.
func (r *report) entriesPerSecond(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(r.n) * float64(r.n) / d.Seconds()
}

// record is the solver's Recorder: it keeps the trace and prints progress
// at most once a second, and always for the first and the last iteration.
func (r *report) record(it fw.Iteration) error {
	r.trace = append(r.trace, it)
	if r.cfg.quiet {
		return nil
	}
	last := it.Step == 0 && it.PassTime == 0
	switch {
	case last:
		fmt.Fprintf(r.out, "iter %6d  f %.10g  gap %.4g  stop  %.1fs\n", it.Iter, it.Objective, it.Gap, it.Elapsed.Seconds())
	case it.Iter == 0 || it.Elapsed-r.printed >= progressEvery:
		r.printed = it.Elapsed
		fmt.Fprintf(r.out, "iter %6d  f %.10g  gap %.4g  step %.4g  pass %.3fs  %.3g entries/s  %.1fs\n",
			it.Iter, it.Objective, it.Gap, it.Step, it.PassTime.Seconds(), r.entriesPerSecond(it.PassTime), it.Elapsed.Seconds())
	}
	return nil
}

// finish fills the summary, scoring the clusters against the labels if any.
func (r *report) finish(w []float64) error {
	c, res := r.cfg, r.res
	var passTime time.Duration
	for _, it := range r.trace {
		passTime += it.PassTime
	}
	r.sum = summary{
		Input: c.inputName(), N: r.n, P: r.tab.P, K: c.k,
		Method: "fw", Step: c.step.String(), Init: c.start.String(),
		Gamma: r.gamma, GammaRule: r.gammaRule(), Standardize: c.standardize,
		Seed: c.seed, Workers: c.workers, Tile: c.block, Kernel: "go",
		Tol: c.tol, Ftol: c.ftol, MaxIter: c.maxIter, Refresh: c.refresh,
		Iterations: res.Iterations, Passes: res.Passes,
		Objective: res.Objective, Gap: res.Gap,
		Converged: res.Status.Converged(), StopReason: res.Status.String(),
		Seconds: r.seconds, SolveSeconds: res.Runtime.Seconds(),
		PFrobeniusSq: res.FrobSq, PMaxRowSum: res.MaxRowSum,
	}
	if res.Iterations > 0 {
		r.sum.EntriesPerSecond = r.entriesPerSecond(passTime / time.Duration(res.Iterations))
	}
	if r.tab.Labels == nil {
		return nil
	}
	pred := make([]int, r.n)
	for i := range pred {
		pred[i] = store.Argmax(w[i*c.k : (i+1)*c.k])
	}
	ari, err := score.ARI(r.tab.Labels, pred)
	if err != nil {
		return err
	}
	nmi, err := score.NMI(r.tab.Labels, pred)
	if err != nil {
		return err
	}
	acc, err := score.Accuracy(r.tab.Labels, pred)
	if err != nil {
		return err
	}
	r.sum.Classes = len(r.tab.Classes)
	r.sum.ARI, r.sum.NMI, r.sum.Accuracy = &ari, &nmi, &acc
	return nil
}

// write writes -out, -summary and -trace, each atomically.
func (r *report) write(w []float64) error {
	c := r.cfg
	if c.out != "" {
		if err := store.WriteFileAtomic(c.out, func(f io.Writer) error {
			if outFormat(c.out) == "arrow" {
				return store.WriteMembershipArrow(f, w, r.n, c.k)
			}
			return store.WriteMembershipCSV(f, w, r.n, c.k)
		}); err != nil {
			return fmt.Errorf("-out: %w", err)
		}
	}
	if c.summary != "" {
		if err := store.WriteFileAtomic(c.summary, func(f io.Writer) error {
			enc := json.NewEncoder(f)
			enc.SetIndent("", "  ")
			return enc.Encode(r.sum)
		}); err != nil {
			return fmt.Errorf("-summary: %w", err)
		}
	}
	if c.trace != "" {
		if err := store.WriteFileAtomic(c.trace, r.writeTrace); err != nil {
			return fmt.Errorf("-trace: %w", err)
		}
	}
	return nil
}

// writeTrace writes the trace CSV: one row per iteration, the last being the
// iterate the run stopped at (step 0). passes counts tile passes so far.
func (r *report) writeTrace(f io.Writer) error {
	bw := bufio.NewWriter(f)
	bw.WriteString("iter,seconds,objective,gap,step_size,passes\n")
	var b []byte
	for _, it := range r.trace {
		b = strconv.AppendInt(b[:0], int64(it.Iter), 10)
		for _, v := range []float64{it.Elapsed.Seconds(), it.Objective, it.Gap, it.Step} {
			b = append(b, ',')
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(it.Passes), 10)
		b = append(b, '\n')
		bw.Write(b)
	}
	return bw.Flush()
}

// table prints the human-readable result.
func (r *report) table(out io.Writer, w []float64) {
	s := r.sum
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...) }
	row("input", "%s (n=%d, p=%d)", s.Input, s.N, s.P)
	row("clusters", "%d", s.K)
	row("kernel", "gamma=%.6g (%s), standardize=%v", s.Gamma, s.GammaRule, s.Standardize)
	row("objective", "%.10g", s.Objective)
	row("fw gap", "%.4g", s.Gap)
	row("stopped", "%s after %d iterations, %d tile passes", s.StopReason, s.Iterations, s.Passes)
	row("time", "%.2fs (%.3g entries/s per pass)", s.Seconds, s.EntriesPerSecond)
	row("||P||_F^2", "%.8g (max row sum %.6g)", s.PFrobeniusSq, s.PMaxRowSum)
	if s.ARI != nil {
		row("vs labels", "ARI %.4f  NMI %.4f  accuracy %.4f (%d classes)", *s.ARI, *s.NMI, *s.Accuracy, s.Classes)
	}
	sizes := make([]string, s.K)
	counts := make([]int, s.K)
	for i := range r.n {
		counts[store.Argmax(w[i*s.K:(i+1)*s.K])]++
	}
	for c, m := range counts {
		sizes[c] = strconv.Itoa(m)
	}
	row("cluster sizes", "%s", strings.Join(sizes, " "))
	tw.Flush()
}
