package solver

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/checkpoint"
)

// Saved is the settings part of a checkpoint, as JSON: the caller's
// settings (Args: ssnmf solve's command line, or Solve's Options), a
// fingerprint of the problem the run was solving, and where its starts
// stand.
type Saved struct {
	// Args are the caller's settings: ssnmf solve's command line, as
	// -name=value, then the input; or, for a checkpoint of Solve,
	// SolveArgs, then the Options that shape the result, as
	// Field=value (Options.Resume compares them).
	Args     []string `json:"args"`
	N        int      `json:"n"`
	K        int      `json:"k"`
	Gamma    float64  `json:"gamma"`
	Checksum uint32   `json:"checksum"` // CRC-32C of the features as used, or of the tile file's metadata
	// InputSum is a CRC-32C of the features as read from the input,
	// before any are standardized (0 when P is read from a file without
	// INPUT, and in checkpoints made before it was kept): a resume
	// compares it as soon as it has read the input, before it builds P.
	InputSum uint32 `json:"input_checksum,omitempty"`
	// Kernel is the family of the vector kernels the run ran (tile.ISA's
	// name): a resume that runs another says so.
	Kernel string `json:"kernel,omitempty"`
	// A run of several starts: the start the checkpoint's state is of, the
	// starts before it, which all ended, and the best of them, whose W is
	// in the file Workspace.BestPath(Best).
	Start int     `json:"start,omitempty"`
	Ended []Start `json:"ended,omitempty"`
	Best  *int    `json:"best,omitempty"`
	// Finished, once the run has ended (on any stop but the time limit or
	// a signal), says how: a later resume reports it and rewrites nothing.
	Finished *Finished `json:"finished,omitempty"`
}

// Finished is how a checkpointed run ended: the stop of its last start
// (the one the checkpoint's state is of), its iterations, the MaxIter it
// ran with, and the outputs it wrote, by the caller's name (ssnmf solve's
// flags), as absolute paths.
type Finished struct {
	Stop       string            `json:"stop"`
	Iterations int               `json:"iterations"`
	MaxIter    int               `json:"max_iter"`
	Outputs    map[string]string `json:"outputs,omitempty"`
}

// ReadSaved returns the settings of the checkpoint in the work directory
// dir, for Run.Saved to resume it.
func ReadSaved(dir string) (*Saved, error) {
	name := filepath.Join(dir, CheckpointFile)
	raw, err := checkpoint.ReadSettings(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s holds no checkpoint (%s): a run saves one when a signal or its time limit stops it, and every -checkpoint-every (Options.CheckpointEvery) iterations", dir, CheckpointFile)
	}
	if err != nil {
		return nil, err
	}
	var s Saved
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("checkpoint %s: settings: %w", name, err)
	}
	return &s, nil
}

// saved returns the run's checkpoint settings as they stand.
func (r *Run) saved() *Saved {
	pr := r.Problem
	s := &Saved{Args: r.Args, N: pr.N(), K: r.Options.K, Gamma: pr.Gamma, Checksum: pr.Checksum, InputSum: pr.InputSum,
		Start: r.start, Ended: r.Starts, Kernel: r.Kernel}
	if r.best != nil {
		s.Best = &r.Best
	}
	return s
}

func (s *Saved) marshal() ([]byte, error) { return json.Marshal(s) }

// markFinished marks the checkpoint of the work directory finished
// (Saved.Finished: how the last start stopped, res if no start was
// recorded, and the outputs written), so that a later resume reports the
// run complete instead of running its end again and rewriting its
// outputs. The checkpoint keeps its state, from which a run that stopped
// on MaxIter may go on with a higher one: it is read back into the
// workspace's W and P·W, whose run is over, and saved with its settings
// amended.
func (r *Run) markFinished(res *fw.Result, outputs map[string]string) error {
	ws, path := r.Workspace, r.Workspace.CheckpointPath()
	ck, err := r.load()
	if err != nil {
		return fmt.Errorf("marking the run finished: %w", err)
	}
	var s Saved
	if err := json.Unmarshal(ck.Settings, &s); err != nil {
		return fmt.Errorf("marking the run finished: checkpoint %s: settings: %w", path, err)
	}
	f := &Finished{Stop: res.Status.String(), Iterations: res.Iterations, MaxIter: max(r.Options.MaxIter, 0), Outputs: outputs}
	if n := len(r.Starts); n > 0 {
		f.Stop, f.Iterations = r.Starts[n-1].Stop, r.Starts[n-1].Iterations
	}
	s.Finished = f
	settings, err := s.marshal()
	if err != nil {
		return err
	}
	ck.State.W, ck.State.PW = ws.W, ws.PW
	if err := checkpoint.SaveFS(r.fs(), path, &ck.State, settings, ck.Trace); err != nil {
		return fmt.Errorf("the outputs are written, but marking the run finished failed (a -resume may run its end again): %w", err)
	}
	return nil
}

// CheckInput checks, as soon as a resumed run has read its input, the
// CRC-32C of its features as read (InputSum) and their rows n against
// the checkpoint's (one made before InputSum was kept has none to
// compare: Check checks the input once P is built).
func (s *Saved) CheckInput(sum uint32, n int) error {
	if s.InputSum == 0 || s.InputSum == sum && s.N == n {
		return nil
	}
	return s.inputChanged(n, fmt.Sprintf("checksum of the features as read %08x, the checkpoint's %08x", sum, s.InputSum))
}

// Check checks that the problem pr set up for a resumed run is the one the
// checkpoint was made on: the input first (its rows, and the checksum of
// P's features or file), so that an edited input is named as such, then
// gamma.
func (s *Saved) Check(pr *Problem) error {
	switch {
	case s.N != pr.N() || s.Checksum != pr.Checksum:
		return s.inputChanged(pr.N(), fmt.Sprintf("checksum %08x, the checkpoint's %08x", pr.Checksum, s.Checksum))
	case math.Float64bits(s.Gamma) != math.Float64bits(pr.Gamma):
		return fmt.Errorf("gamma is %v, the checkpoint's %v", pr.Gamma, s.Gamma)
	}
	return nil
}

// inputChanged is the error of a resumed run whose input of n rows is not
// the checkpoint's; detail says how it differs when the rows agree.
func (s *Saved) inputChanged(n int, detail string) error {
	if n != s.N {
		detail = fmt.Sprintf("it has %d rows, the checkpoint %d", n, s.N)
	}
	return fmt.Errorf("the input changed since the checkpoint (%s); resume with the input the run began with, or start a new run", detail)
}

// InputSum returns the CRC-32C of the features of tab, which a checkpoint
// keeps (Problem.InputSum) and a resumed run compares (Saved.CheckInput).
func InputSum(tab *store.Table) uint32 {
	return crc32.Checksum(store.AsBytes(tab.Features), crc32.MakeTable(crc32.Castagnoli))
}

// SolveArgs is the first of the Args of a checkpoint of Solve: the Args
// after it are the Options of the run that shape its result, as
// Field=value (the fields Options.Resume compares).
const SolveArgs = "solver.Options"

// resumable are the fields of Options that a resumed Solve may change,
// as ssnmf solve -resume may change its flags of them (marked mutable):
// they change neither the iterates nor the answer, or say where the run
// is and what it writes. K is the checkpoint's own (Saved.K). A field
// added to Options is compared unless it is listed here: its value must
// print the same in every process (fmt.Sprint).
var resumable = []string{"K", "Workers", "Memory", "Kernel", "MaxIter", "MaxTime", "CheckpointEvery", "Workdir", "Model", "Resume"}

// args returns the Args of a checkpoint of a Solve of o (with its
// defaults): SolveArgs, then every field of o but the resumable ones, in
// their order, as Field=value: numbers as fmt prints them (a float to
// the bit), names as their String methods, Scale as ParseScale reads it
// (the zero Scale as auto:2) and File as an absolute path.
func (o Options) args() []string {
	args := []string{SolveArgs}
	v, t := reflect.ValueOf(o), reflect.TypeFor[Options]()
	for i := range t.NumField() {
		name := t.Field(i).Name
		if slices.Contains(resumable, name) {
			continue
		}
		value := fmt.Sprint(v.Field(i).Interface())
		switch name {
		case "Scale":
			value = o.Scale.canonical()
		case "File":
			if abs, err := filepath.Abs(o.File); err == nil && o.File != "" {
				value = abs
			}
		}
		args = append(args, name+"="+value)
	}
	return args
}

// canonical returns s as ParseScale reads it, the zero Scale's rule and
// multiple made explicit: "auto:2", "mass:1", or the factor.
func (s Scale) canonical() string {
	if s.Factor > 0 {
		return strconv.FormatFloat(s.Factor, 'g', -1, 64)
	}
	sizes, auto, times := s.rules()
	rule := ScaleMass
	switch {
	case auto:
		rule = ScaleAuto
	case sizes:
		rule = ScaleSizes
	}
	return rule + ":" + strconv.FormatFloat(times, 'g', -1, 64)
}

// CommandLine reports whether the checkpoint's Args are a command line,
// ssnmf solve's, rather than the Options of a Solve.
func (s *Saved) CommandLine() bool { return len(s.Args) > 0 && strings.HasPrefix(s.Args[0], "-") }

// checkOptions checks that o, the settings of a Solve that resumes the
// checkpoint in dir, are those of the checkpoint's run but for the
// resumable fields (K only if given), naming the first field that differs
// and both values. It refuses a checkpoint of ssnmf solve, whose settings
// are a command line, and one that keeps no Options.
func (s *Saved) checkOptions(o Options, dir string) error {
	switch {
	case s.CommandLine():
		return fmt.Errorf("the checkpoint in %s is of ssnmf solve, whose settings are a command line, not Options: resume it with ssnmf solve -resume %s", dir, dir)
	case len(s.Args) == 0 || s.Args[0] != SolveArgs:
		return fmt.Errorf("the checkpoint in %s keeps no Options (a Run's, or a Solve's of an earlier release), which a resume must compare: start a new run", dir)
	case o.K != 0 && o.K != s.K:
		return fmt.Errorf("the checkpoint's run has Options.K %d, this call %d", s.K, o.K)
	}
	was := map[string]string{}
	for _, a := range s.Args[1:] {
		field, value, _ := strings.Cut(a, "=")
		was[field] = value
	}
	for _, a := range o.args()[1:] {
		field, value, _ := strings.Cut(a, "=")
		if w, ok := was[field]; !ok {
			return fmt.Errorf("the checkpoint's run keeps no Options.%s (an earlier release's), this call %s", field, shown(value))
		} else if w != value {
			return fmt.Errorf("the checkpoint's run has Options.%s %s, this call %s", field, shown(w), shown(value))
		}
	}
	return nil
}

// shown is a value of Args as an error shows it: "" quoted.
func shown(v string) string {
	if v == "" {
		return `""`
	}
	return v
}
