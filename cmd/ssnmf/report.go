package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/spectral"
	"github.com/ssnmf/ssnmf/trace"
)

// spectralEvery is the most often a line of the spectral embedding's
// iterations is printed.
const spectralEvery = 5 * time.Second

// report is what a run reports: progress lines as it goes, the trace, and
// the summary at the end. It is the run's solver.Observer.
type report struct {
	progress *progress
	trace    *trace.Writer // -trace, written as the run goes; kept for checkpoints
	sum      *summaryBuilder
	// spectralLine is the time into the spectral embedding of its last
	// line.
	spectralLine time.Duration
}

// Iteration prints the iteration's progress line.
func (r *report) Iteration(_ int, it fw.Iteration) { r.progress.iteration(it) }

// Sweep prints how far a long sweep has come.
func (r *report) Sweep(rows int) { r.progress.sweep(rows) }

// StartBegun prints the line of a start.
func (r *report) StartBegun(s, n int, seed uint64) {
	r.printf("ssnmf: start %d of %d (seed %d)\n", s+1, n, seed)
}

// Resumed prints the line of a resumed run.
func (r *report) Resumed(s int, st *fw.State) {
	r.printf("ssnmf: resuming start %d at iteration %d (%d passes, %.1fs so far)\n", s, st.Iter, st.Passes, st.Elapsed.Seconds())
}

// Checkpointed prints the line of a checkpoint saved.
func (r *report) Checkpointed(iter int, d time.Duration) {
	r.printf("ssnmf: checkpoint at iteration %d saved in %.2fs\n", iter, d.Seconds())
}

// SpectralProgress prints a line of the spectral embedding's iterations
// every spectralEvery.
func (r *report) SpectralProgress(it, passes int, res float64, elapsed time.Duration) {
	if elapsed-r.spectralLine >= spectralEvery {
		r.spectralLine = elapsed
		r.printf("  spectral embedding: iteration %d, %d passes over P, largest residual %.2g, %.0fs\n", it, passes, res, elapsed.Seconds())
	}
}

// SpectralDone prints the line of the spectral embedding, and a warning
// if it did not converge.
func (r *report) SpectralDone(e *spectral.Embedding, rep *solver.SpectralReport) {
	steps := "iterations"
	if rep.Sweeps > 0 {
		steps = "sweeps"
	}
	r.printf("ssnmf: spectral embedding: %d eigenvectors (block %d), %d coarse levels, %d %s, %d passes over P, %.1fs; eigenvalues %s; %d components, eigengap %.3g; largest residual %.2g\n",
		e.K, e.Block, e.Levels, e.Iterations, steps, e.Passes, rep.Seconds, rep.FormatEigenvalues(), e.Components, rep.Eigengap, slices.Max(e.Residuals))
	if !e.Converged && rep.Sweeps == 0 {
		fmt.Fprintf(r.progress.out, "ssnmf: warning: the spectral embedding stopped after %d iterations with a residual of %.2g, above %g: its eigenvectors are approximate\n",
			e.Iterations, slices.Max(e.Residuals), rep.Tol)
	}
}

// printf prints a line on the progress's output, unless quiet.
func (r *report) printf(format string, args ...any) {
	if !r.progress.quiet {
		fmt.Fprintf(r.progress.out, format, args...)
	}
}
