package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/ssnmf/ssnmf/store/checkpoint"
	"github.com/ssnmf/ssnmf/tile"
)

// savedRun is the settings part of a checkpoint, as JSON: the command line
// of the run, and a fingerprint of the problem it was solving.
type savedRun struct {
	Args     []string `json:"args"` // the command line, as -name=value, then the input
	N        int      `json:"n"`
	K        int      `json:"k"`
	Gamma    float64  `json:"gamma"`
	Checksum uint32   `json:"checksum"` // CRC-32C of the features as used, or of the tile file's metadata
	// Kernel is the family of the vector kernels the run ran (tile.ISA's
	// name): a resume that runs another says so.
	Kernel string `json:"kernel,omitempty"`
	// A run of several starts: the start the checkpoint's state is of, the
	// starts before it, which all ended, and the best of them, whose W is
	// in the file workspace.bestPath(Best).
	Start int           `json:"start,omitempty"`
	Ended []startResult `json:"ended,omitempty"`
	Best  *int          `json:"best,omitempty"`
}

// savedSettings returns the JSON of the run's savedRun.
func (r *solveRun) savedSettings() ([]byte, error) {
	c := r.cfg
	s := savedRun{N: r.prob.N(), K: c.k, Gamma: r.prob.Gamma, Checksum: r.prob.Checksum, Start: r.start, Ended: r.rep.sum.starts, Kernel: c.isa.String()}
	if r.best != nil {
		s.Best = &r.rep.sum.bestStart
	}
	var err error
	if s.Args, err = c.canonicalArgs(); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

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
func resumeConfig(c *config, stdout io.Writer) (*config, *savedRun, error) {
	name := filepath.Join(c.resume, checkpointFile)
	raw, err := checkpoint.ReadSettings(name)
	if err != nil {
		return nil, nil, usagef("-resume: %v", err)
	}
	var s savedRun
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, nil, usagef("-resume: checkpoint %s: settings: %v", name, err)
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
	merged.workdir, merged.resume = c.resume, c.resume
	if merged.k == 0 {
		merged.k = s.K
	}
	return merged, &s, nil
}

// matches checks that the problem set up for a resumed run is the one the
// checkpoint was made on.
func (s *savedRun) matches(pr *problem) error {
	switch {
	case s.N != pr.N():
		return fmt.Errorf("-resume: the input has %d rows, the checkpoint %d", pr.N(), s.N)
	case math.Float64bits(s.Gamma) != math.Float64bits(pr.Gamma):
		return fmt.Errorf("-resume: gamma is %v, the checkpoint's %v", pr.Gamma, s.Gamma)
	case s.Checksum != pr.Checksum:
		return fmt.Errorf("-resume: the input changed since the checkpoint (checksum %08x, the checkpoint's %08x)", pr.Checksum, s.Checksum)
	}
	return nil
}

// resolveKernels resolves -kernel (see resolveKernel) for a new run, or
// for the run of checkpoint saved, and says on stderr when a resumed run
// runs other kernels than its checkpoint's run did (its results then
// differ in rounding; the summary names both families).
func (c *config) resolveKernels(saved *savedRun, stderr io.Writer) error {
	note, err := c.resolveKernel(saved != nil)
	if err != nil {
		return err
	}
	if saved != nil && saved.Kernel != "" && saved.Kernel != c.isa.String() {
		c.checkpointKernel = saved.Kernel
		if note == "" {
			note = fmt.Sprintf("the checkpoint's run ran the %s kernels; this CPU (%s) runs %s, whose results differ in rounding", saved.Kernel, tile.CPUFeatures(), c.isa)
		}
	}
	if note != "" {
		fmt.Fprintln(stderr, "ssnmf: "+note)
	}
	return nil
}
