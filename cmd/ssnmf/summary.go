package main

import (
	"fmt"
	"io"

	"github.com/ssnmf/ssnmf/fw"
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

// finish makes the summary of the run's result res, which took seconds
// in all and ended at w, with what the command adds: the input's name, the
// flag of the affinity, the engine, the memory and the times.
// A score that cannot be computed is left out, with a warning.
func (b *summaryBuilder) finish(res *fw.Result, seconds float64, w []float64) {
	c, pr := b.cfg, b.prob
	s, warnings := b.run.Summary(res, w)
	for _, err := range warnings {
		fmt.Fprintf(b.warn, "ssnmf: warning: %v\n", err)
	}
	s.Input, s.Affinity = c.inputName(), c.affinity
	s.Seconds, s.AffinitySeconds = seconds, b.setup
	s.PeakRSSBytes, s.Memory, s.Engine = solver.PeakRSS(), c.budget, c.engine
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
	b.sum.IO = solver.NewIOReport(c.disk)
	if o.summary != nil {
		if err := b.sum.WriteJSON(o.summary); err != nil {
			return fmt.Errorf("-summary %s: %w", c.summary, err)
		}
	}
	return nil
}
