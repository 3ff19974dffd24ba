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
// and the initial point of the problem, and the stop rules that 0 turns
// off as the run's Options have them.
func (c *config) options() solver.Options {
	o := c.kernelConfig.options()
	o.K, o.Method, o.Starts, o.MaxIter, o.Tol, o.Mtol, o.Workdir, o.Model = c.k, c.method, c.starts, c.maxIter, c.tol, c.mtol, c.workdir, c.model
	o.Init, o.InitStarts, o.Step, o.Ftol, o.Rtol, o.Frtol = c.init, c.initStarts, c.step, c.ftol, c.rtol, c.frtol
	o.MaxTime, o.Refresh, o.Moves, o.StripMemory, o.SweepOrder = c.maxTime, c.refresh, c.moves, c.stripMemory, c.sweepOrder
	return o
}

// newRun returns the solve of prob with the method info in the workspace
// ws, reported by rep: the run of package solver with the command's
// settings, its stop, its trace and, for a method that saves checkpoints,
// the command line a checkpoint keeps.
func (sv *solving) newRun(info methods.Method, prob *problem, m *solver.Meter, ws *solver.Workspace, rep *report) (*solver.Run, error) {
	c := sv.c
	r := &solver.Run{Options: c.options(), Problem: &prob.Problem, Meter: m, Workspace: ws, Observer: rep, Stop: sv.stop, Begin: sv.begin,
		Trace: rep.trace, TraceName: "-trace " + c.trace, CheckpointEvery: c.checkpointEvery, FS: c.fs(), Saved: sv.saved, Kernel: c.isa.String()}
	if info.Checkpoints {
		var err error
		if r.Args, err = c.canonicalArgs(); err != nil {
			return nil, err
		}
	}
	rep.sum.run = r
	return r, nil
}
