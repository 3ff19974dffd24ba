package main

import (
	"fmt"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/trace"
)

// report is what a run reports: progress lines as it goes, the trace, and
// the summary at the end.
type report struct {
	progress  *progress
	trace     *trace.Writer // -trace, written as the run goes; kept for checkpoints
	tracePath string        // -trace, for errors
	sum       *summaryBuilder
}

// record is the solver's Recorder: it writes the iteration's trace row and
// prints its progress line.
func (r *report) record(it fw.Iteration) error {
	if err := r.trace.Record(it); err != nil {
		return fmt.Errorf("-trace %s: %w", r.tracePath, err)
	}
	r.progress.iteration(it)
	return nil
}

// restoreTrace takes up the trace of a checkpoint: it becomes the start of
// the trace of the resumed run.
func (r *report) restoreTrace(saved []byte) error {
	if err := r.trace.Restore(saved); err != nil {
		return fmt.Errorf("-trace %s: %w", r.tracePath, err)
	}
	return nil
}
