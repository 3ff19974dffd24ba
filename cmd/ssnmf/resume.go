package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ssnmf/ssnmf/store/checkpoint"
)

// mutableFlags may differ between a run and its resumption: they change
// neither the iterates nor the answer.
var mutableFlags = []string{"workers", "max-iter", "checkpoint-every", "out", "summary", "trace", "q"}

// savedRun is the settings part of a checkpoint, as JSON: the command line
// of the run, and a fingerprint of the problem it was solving.
type savedRun struct {
	Args     []string `json:"args"` // the command line, as -name=value, then the input
	N        int      `json:"n"`
	K        int      `json:"k"`
	Gamma    float64  `json:"gamma"`
	Checksum uint32   `json:"checksum"` // CRC-32C of the features as used, or of the tile file's metadata
}

// savedSettings returns the JSON of the run's savedRun.
func (r *solveRun) savedSettings() ([]byte, error) {
	c := r.cfg
	s := savedRun{N: r.prob.n, K: c.k, Gamma: r.prob.gamma, Checksum: r.prob.checksum}
	var err error
	if s.Args, err = c.canonicalArgs(); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// canonicalArgs returns the command line of c: every flag of solve but
// -resume and -workdir, as -name=value, with paths made absolute, then the
// input if any. A resumed run starts from it.
func (c *config) canonicalArgs() ([]string, error) {
	_, fs, err := parseSolve(nil, io.Discard)
	if err != nil {
		return nil, err
	}
	values := map[string]string{
		"k": fmt.Sprint(c.k), "gamma": c.gamma.String(), "standardize": fmt.Sprint(c.standardize),
		"precision": c.precision.String(), "tile": fmt.Sprint(c.block), "seed": fmt.Sprint(c.seed),
		"label": c.label, "method": c.method, "step": c.step.String(), "init": c.init,
		"tol": fmt.Sprint(c.tol), "ftol": fmt.Sprint(c.ftol), "refresh": fmt.Sprint(c.refresh),
		"restarts": fmt.Sprint(c.restarts), "format": c.format,
		"moves": fmt.Sprint(c.moves), "strip-memory": fmt.Sprint(c.stripMemory), "workers": fmt.Sprint(c.workers), "max-iter": fmt.Sprint(c.maxIter),
		"checkpoint-every": fmt.Sprint(c.checkpointEvery), "q": fmt.Sprint(c.quiet),
	}
	for name, path := range map[string]string{"out": c.out, "summary": c.summary, "trace": c.trace, "affinity": c.affinity} {
		if path == "" {
			continue
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		values[name] = abs
	}
	if len(c.features) > 0 {
		values["features"] = strings.Join(c.features, ",")
	}
	var args []string
	var missing []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "resume" || f.Name == "workdir" {
			return
		}
		v, ok := values[f.Name]
		if !ok {
			switch f.Name {
			case "features", "affinity", "out", "summary", "trace": // not given
			default:
				missing = append(missing, f.Name)
			}
			return
		}
		args = append(args, "-"+f.Name+"="+v)
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("checkpoint: flags %v are not recorded", missing)
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

// resumeConfig returns the configuration of the run checkpointed in
// c.resume: its saved settings, with the mutable flags given now applied.
// A result-shaping flag given now must agree with the checkpoint.
func resumeConfig(c *config, fs *flag.FlagSet, stdout io.Writer) (*config, *savedRun, error) {
	name := filepath.Join(c.resume, checkpointFile)
	raw, err := checkpoint.ReadSettings(name)
	if err != nil {
		return nil, nil, usagef("-resume: %v", err)
	}
	var s savedRun
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, nil, usagef("-resume: checkpoint %s: settings: %v", name, err)
	}
	saved, sfs, err := parseSolve(s.Args, stdout)
	if err != nil {
		return nil, nil, usagef("-resume: checkpoint %s: settings %q: %v", name, s.Args, err)
	}
	var conflict error
	fs.Visit(func(f *flag.Flag) {
		switch {
		case conflict != nil || f.Name == "resume":
		case f.Name == "workdir":
			conflict = usagef("-resume %s: the checkpoint's directory is the work directory; -workdir cannot be given", c.resume)
		case slices.Contains(mutableFlags, f.Name):
			sfs.Set(f.Name, f.Value.String())
		case sfs.Lookup(f.Name).Value.String() != f.Value.String():
			conflict = usagef("-%s %s differs from the checkpoint's -%s %s; a resumed run keeps the settings that shape its result (only %v may change)",
				f.Name, f.Value, f.Name, sfs.Lookup(f.Name).Value, mutableFlags)
		}
	})
	if conflict != nil {
		return nil, nil, conflict
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
	merged, _, err := parseSolve(args, stdout)
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
	case s.N != pr.n:
		return fmt.Errorf("-resume: the input has %d rows, the checkpoint %d", pr.n, s.N)
	case math.Float64bits(s.Gamma) != math.Float64bits(pr.gamma):
		return fmt.Errorf("-resume: gamma is %v, the checkpoint's %v", pr.gamma, s.Gamma)
	case s.Checksum != pr.checksum:
		return fmt.Errorf("-resume: the input changed since the checkpoint (checksum %08x, the checkpoint's %08x)", pr.checksum, s.Checksum)
	}
	return nil
}
