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
	return solver.Options{K: c.k, Method: c.method, Gaussian: c.gaussian(), Neighbors: c.neighbors, Raw: !c.standardize,
		Starts: c.starts, Seed: c.seed, Workers: c.workers, MaxIter: c.maxIter, Tol: c.tol, Mtol: c.mtol,
		Workdir: c.workdir, Model: c.model, Memory: int64(c.mem),
		Init: c.init, InitStarts: c.initStarts, Step: c.step, Ftol: c.ftol, Rtol: c.rtol, Frtol: c.frtol,
		MaxTime: c.maxTime, Refresh: c.refresh, Moves: c.moves, StripMemory: c.stripMemory, SweepOrder: c.sweepOrder, Scale: c.scale.Scale}
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
