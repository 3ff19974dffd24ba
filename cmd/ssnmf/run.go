package main

import (
	"github.com/ssnmf/ssnmf/methods"
	"github.com/ssnmf/ssnmf/solver"
)

// checkScale checks that -scale sizes, if given, has what it needs: the
// features, for its k-means clustering (the flag table refuses -scale
// without a sparse P).
func (c *config) checkScale(prob *problem) error {
	switch {
	case c.scale.Rule != solver.ScaleSizes:
		return nil
	case prob.Table == nil:
		return usagef("-scale sizes needs the features for its k-means clustering: give the INPUT that -affinity was made from")
	}
	return nil
}

// options returns the solver's settings of c, as resolved: k, the starts
// and the initial point of the problem; a stop rule or bound that its flag
// turns off with 0 is negative there.
func (c *config) options() solver.Options {
	o := c.kernelConfig.options()
	o.MaxIter, o.Tol, o.Mtol, o.Refresh, o.StripMemory = offRule(c.maxIter), offRule(c.tol), offRule(c.mtol), offRule(c.refresh), offRule(c.stripMemory)
	return o
}

// offRule is the value of a flag whose 0 turns its rule off, as
// solver.Options has it: 0 is negative there.
func offRule[T int | int64 | float64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// newRun returns the solve of prob with the method info in the workspace
// ws, reported by rep: the run of package solver with the command's
// settings, its stop, its trace and, for a method that saves checkpoints,
// the command line a checkpoint keeps.
func (sv *solving) newRun(info methods.Method, prob *problem, m *solver.Meter, ws *solver.Workspace, rep *report) (*solver.Run, error) {
	c := sv.c
	r := &solver.Run{Options: c.options(), Problem: &prob.Problem, Meter: m, Workspace: ws, Observer: rep, Stop: sv.stop, Begin: sv.begin,
		Trace: rep.trace, TraceName: "-trace " + c.trace, FS: c.fs(), Saved: sv.saved, Kernel: c.run.Kernel.String()}
	if info.Checkpoints {
		var err error
		if r.Args, err = c.canonicalArgs(); err != nil {
			return nil, err
		}
	}
	rep.sum.run = r
	return r, nil
}
