package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
)

// canonicalArgs returns the command line of c: every flag of solve but
// -resume and -workdir, as -name=value, then the input if any. A resumed
// run starts from it. The values are those of c's flags, which hold c's
// settings as resolved (k from the labels, the init used, the tile edge
// cut to n, the features joined by commas); files are made absolute, and
// the flags marked optional are left out when empty.
func (c *config) canonicalArgs() ([]string, error) {
	var args []string
	var err error
	c.flags.VisitAll(func(f *flag.Flag) {
		v := f.Value.String()
		switch {
		case err != nil || f.Name == "resume" || f.Name == "workdir" || v == "" && slices.Contains(c.marks.optional, f.Name):
			return
		case slices.Contains(c.marks.files, f.Name) && !(f.Name == "affinity" && (v == affinityKNN || v == affinityGaussian)):
			v, err = filepath.Abs(v)
		}
		args = append(args, "-"+f.Name+"="+v)
	})
	if err != nil {
		return nil, err
	}
	if c.input != "" {
		abs, err := filepath.Abs(c.input)
		if err != nil {
			return nil, err
		}
		args = append(args, abs)
	}
	return args, nil
}

// outputFlags are the flags of solve's outputs.
var outputFlags = []string{"out", "summary", "trace"}

// resumeConfig returns the configuration of the run checkpointed in
// c.resume: its saved settings, with the mutable flags given now applied.
// A result-shaping flag given now must agree with the checkpoint. If any
// output flag (-out, -summary, -trace) is given now, the run writes the
// outputs given and none of the checkpoint's; if none is, it writes all of
// the checkpoint's, so that never some of them are rewritten and others
// left from an earlier state.
func resumeConfig(c *config, stdout io.Writer) (*config, *solver.Saved, error) {
	name := filepath.Join(c.resume, solver.CheckpointFile)
	s, err := solver.ReadSaved(c.resume)
	if err != nil {
		return nil, nil, usagef("-resume: %v", err)
	}
	if !s.CommandLine() {
		return nil, nil, usagef("-resume: checkpoint %s keeps no command line: it is of a Go program's run (solver.Solve, whose Options.Resume resumes it)", name)
	}
	saved, err := parseSolve(s.Args, stdout)
	if err != nil {
		return nil, nil, usagef("-resume: checkpoint %s: settings %q: %v", name, s.Args, err)
	}
	sfs, mutable := saved.flags, c.marks.mutables
	var conflict error
	given := map[string]bool{}
	c.flags.Visit(func(f *flag.Flag) {
		given[f.Name] = true
		switch {
		case conflict != nil || f.Name == "resume":
		case f.Name == "workdir":
			conflict = usagef("-resume %s: the checkpoint's directory is the work directory; -workdir cannot be given", c.resume)
		case slices.Contains(mutable, f.Name):
			sfs.Set(f.Name, f.Value.String())
		case sfs.Lookup(f.Name).Value.String() != f.Value.String():
			conflict = usagef("-%s %s differs from the checkpoint's -%s %s; a resumed run keeps the settings that shape its result (only %v may change)",
				f.Name, f.Value, f.Name, sfs.Lookup(f.Name).Value, mutable)
		}
	})
	if conflict != nil {
		return nil, nil, conflict
	}
	// The outputs written are one set, all from the state this run ends
	// in: those given now, if any is, and none of the checkpoint's then;
	// else all of the checkpoint's.
	if slices.ContainsFunc(outputFlags, func(name string) bool { return given[name] }) {
		for _, name := range outputFlags {
			if !given[name] {
				sfs.Set(name, "")
			}
		}
	}
	// The tasks of -engine slurm are those of the allocation the run
	// resumes in, unless -tasks says otherwise.
	if n := envInt("SLURM_NTASKS"); n > 0 && !given["tasks"] {
		sfs.Set("tasks", strconv.Itoa(n))
	}
	if c.input != "" {
		abs, err := filepath.Abs(c.input)
		if err != nil || abs != saved.input {
			return nil, nil, usagef("-resume: INPUT %s differs from the checkpoint's %s", c.input, saved.input)
		}
	}
	// Re-parse so that the flags' checks run on the merged values.
	var args []string
	sfs.VisitAll(func(f *flag.Flag) { args = append(args, "-"+f.Name+"="+f.Value.String()) })
	if saved.input != "" {
		args = append(args, saved.input)
	}
	merged, err := parseSolve(args, stdout)
	if err != nil {
		return nil, nil, err
	}
	merged.run.Workdir, merged.resume = c.resume, c.resume
	if merged.run.K == 0 {
		merged.run.K = s.K
	}
	return merged, s, nil
}

// finished answers a -resume of a run that has finished (saved.Finished):
// it says so on stderr and returns true, having written nothing. An output
// given now (given are the flags of the command line) that the run did not
// write is refused: a finished run's outputs are not written again. A run
// that ended on -max-iter goes on (false) when -max-iter is raised above
// the one it ran with.
func (c *config) finished(saved *solver.Saved, given []string, stderr io.Writer) (bool, error) {
	f := saved.Finished
	if f == nil || f.Stop == fw.IterationLimit.String() && c.maxIter > f.MaxIter {
		return false, nil
	}
	how := fmt.Sprintf("it stopped on %s after %d iterations", f.Stop, f.Iterations)
	outs, err := c.outputPaths()
	if err != nil {
		return false, err
	}
	for _, name := range slices.Concat(outputFlags, []string{"model"}) {
		if slices.Contains(given, name) && outs[name] != f.Outputs[name] {
			return false, usagef("-resume %s: the run has finished (%s), and -%s %s is not one of the outputs it wrote, which are not written again; start a new run to write it",
				c.resume, how, name, c.flags.Lookup(name).Value)
		}
	}
	more := ""
	if f.Stop == fw.IterationLimit.String() {
		more = fmt.Sprintf("; a -max-iter above %d goes on", f.MaxIter)
	}
	fmt.Fprintf(stderr, "ssnmf: -resume %s: the run has finished (%s); its outputs were written when it ended, and nothing is rewritten%s\n", c.resume, how, more)
	return true, nil
}

// outputPaths returns the outputs of c (-out, -summary, -trace, -model) by
// flag name, as absolute paths ("-" for standard output); those not asked
// for are left out.
func (c *config) outputPaths() (map[string]string, error) {
	outs := map[string]string{}
	for name, path := range map[string]string{"out": c.out, "summary": c.summary, "trace": c.trace, "model": c.run.Model} {
		if path == "" || path == store.StdoutPath {
			if path != "" {
				outs[name] = path
			}
			continue
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("-%s %s: %w", name, path, err)
		}
		outs[name] = abs
	}
	return outs, nil
}

// resolveKernels resolves -kernel (see resolveKernel) for a new run, or
// for the run of checkpoint saved, and says on stderr when a resumed run
// runs other kernels than its checkpoint's run did (its results then
// differ in rounding; the summary names both families).
func (c *config) resolveKernels(saved *solver.Saved, stderr io.Writer) error {
	note, err := c.resolveKernel(saved != nil)
	if err != nil {
		return err
	}
	if saved != nil && saved.Kernel != "" && saved.Kernel != c.run.Kernel.String() && note == "" {
		note = fmt.Sprintf("the checkpoint's run ran the %s kernels; this CPU (%s) runs %s, whose results differ in rounding", saved.Kernel, tile.CPUFeatures(), c.run.Kernel)
	}
	if note != "" {
		fmt.Fprintln(stderr, "ssnmf: "+note)
	}
	return nil
}
