package solver

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"path/filepath"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/checkpoint"
)

// Saved is the settings part of a checkpoint, as JSON: the caller's
// settings (Args: ssnmf solve's command line), a fingerprint of the
// problem the run was solving, and where its starts stand.
type Saved struct {
	// Args are the caller's settings: the command line of the run, as
	// -name=value, then the input.
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
