package fw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Affinity gives access to a symmetric, nonnegative n×n matrix P through
// products. All matrices are row-major []float64 with k columns.
type Affinity interface {
	// N returns the order of P.
	N() int
	// Mul sets dst = P·W. If rowSums is not nil it also writes the row
	// sums of P into it and returns ||P||_F^2.
	Mul(ctx context.Context, dst, w []float64, k int, rowSums []float64) (frobSq float64, err error)
	// MulOneHot sets dst = P·S for the one-hot S with S[i][s[i]] = 1.
	MulOneHot(ctx context.Context, dst []float64, s []int32, k int) error
}

// Problem is a simplicial symmetric NMF problem.
type Problem struct {
	P Affinity // the affinity matrix
	K int      // number of clusters, the columns of W
}

// StepRule chooses the step size λ in [0, 1] of an iteration.
type StepRule int

const (
	// StepExact minimizes the objective along the step exactly (the roots
	// of the quartic's derivative). The objective never increases.
	StepExact StepRule = iota
	// StepCurvature is the rule of the paper, λ = min(g/C, 1) with
	// C = 2n(3n + c) and c the largest row sum of P, an upper bound on
	// the curvature constant. Provably convergent, but the steps are tiny.
	StepCurvature
	// StepOpenLoop is the classic λ = 2/(t+2).
	StepOpenLoop
)

var stepNames = [...]string{StepExact: "exact", StepCurvature: "curvature", StepOpenLoop: "open-loop"}

// String returns the rule's name as the command line spells it.
func (s StepRule) String() string {
	if s >= 0 && int(s) < len(stepNames) {
		return stepNames[s]
	}
	return fmt.Sprintf("StepRule(%d)", int(s))
}

// ParseStepRule returns the rule named s ("exact", "curvature" or "open-loop").
func ParseStepRule(s string) (StepRule, error) {
	for i, name := range stepNames {
		if s == name {
			return StepRule(i), nil
		}
	}
	return 0, fmt.Errorf("unknown step rule %q (want exact, curvature or open-loop)", s)
}

// Status says why the solver stopped.
type Status int

const (
	// NotTerminated means the solver has not stopped.
	NotTerminated Status = iota
	// GapTolerance means the Frank-Wolfe gap fell to Settings.GapTol or below:
	// W is an approximate KKT point.
	GapTolerance
	// FunctionConvergence means the objective changed by less than
	// Settings.FuncTol between two iterations.
	FunctionConvergence
	// IterationLimit means Settings.MaxIter iterations were taken.
	IterationLimit
	// Stopped means Settings.Stop asked the run to stop before it
	// converged; the last checkpoint continues it.
	Stopped
)

var statusNames = [...]string{NotTerminated: "not-terminated", GapTolerance: "gap", FunctionConvergence: "ftol", IterationLimit: "max-iter", Stopped: "stopped"}

// String returns a short name of the status, as the summary reports it.
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Converged reports whether the status certifies an approximate KKT point.
func (s Status) Converged() bool { return s == GapTolerance }

// Settings control a run. The zero value is not ready for use; start from
// DefaultSettings.
type Settings struct {
	Step     StepRule
	GapTol   float64 // stop when the FW gap is <= GapTol
	FuncTol  float64 // stop when |f_t - f_{t-1}| < FuncTol; 0 disables the test
	MaxIter  int     // stop after MaxIter iterations
	Refresh  int     // recompute P·W by a full pass every Refresh iterations; 0 never (only at the end)
	Workers  int     // goroutines for the row passes; 1 if 0
	Recorder func(Iteration) error

	// PW and PS are storage for the n×k matrices P·W and P·S (for example
	// memory-mapped files); nil fields are allocated in memory.
	PW, PS []float64

	// Checkpoint, if not nil, is called with the solver's state at the
	// start of every CheckpointEvery-th iteration (never if CheckpointEvery
	// is 0) and when Stop stops the run. A run resumed from that state ends
	// with the same bits as one never interrupted. An error ends the run.
	Checkpoint      func(*State) error
	CheckpointEvery int

	// Stop, if not nil, is called at the start of every iteration, after
	// the pass that ended the previous one. If it returns true, the run
	// calls Checkpoint and ends with status Stopped.
	Stop func() bool

	// Resume, if not nil, continues the run that saved it: W and PW must
	// hold the State's W and PW, and the problem and the settings that
	// shape the iterates (Step, Refresh, FuncTol, GapTol) must be those of
	// the run that saved it. The first P·W pass is skipped.
	Resume *State
}

// State is the part of the solver's state that W and P·W do not hold: with
// them it determines the rest of the run. Settings.Checkpoint receives it.
//
// Minimize uses the fields up to Gram and leaves the rest zero. A state of
// MinimizeRowCD also has the tracked objective, the gaps its loop carries
// and the pending changes of P·W; its Gram is WᵀW as of the checkpoint,
// which a resumed run recomputes from W rather than reads.
type State struct {
	Iter      int           // iterations taken
	Passes    int           // tile passes taken
	FrobSq    float64       // ||P||_F^2
	MaxRowSum float64       // largest row sum of P
	Prev      float64       // objective before the last step; NaN before the first
	Fresh     bool          // P·W was computed by a pass at W, not carried
	Elapsed   time.Duration // time spent so far
	Gram      []float64     // WᵀW, k×k, as carried by the updates

	// Objective is MinimizeRowCD's tracked objective at W, which a pass
	// would not reproduce to the bit.
	Objective float64
	// Gap is the exact Frank-Wolfe gap of MinimizeRowCD's last P·W pass,
	// the gap at W while Fresh.
	Gap float64
	// SweepGap is the sum of the row gaps of MinimizeRowCD's last sweep,
	// NaN before the first.
	SweepGap float64
	// Pending holds MinimizeRowCD's changes of P·W not yet applied; nil
	// for Minimize.
	Pending *Pending

	// W and PW are the solver's current W and P·W, valid during the call
	// to Settings.Checkpoint only. Resume ignores them.
	W, PW []float64
}

// Pending is the change of every row of W at its last visit by
// MinimizeRowCD, in sparse form. Between sweeps, row i of P·W lacks the
// changes of the rows of the later blocks of rows (those are added when the
// next sweep reaches row i's block), so together with P·W they give the
// product P·W at W.
//
// Row i changed in Count[i] <= NZ columns, Col[i*NZ : i*NZ+Count[i]], by
// Val[i*NZ : i*NZ+Count[i]]; the other slots of a row are not used. NZ is
// 2·Moves. In a State passed to Settings.Checkpoint the slices are the
// solver's own, valid during the call only.
type Pending struct {
	NZ    int       // slots per row
	Count []uint8   // n: the number of changed columns of each row
	Col   []int32   // n×NZ: the changed columns, each < k
	Val   []float64 // n×NZ: the changes
}

// Check reports whether p describes changes of an n×k matrix with nz slots
// per row: the slices have n, n×nz and n×nz values, every count is at most
// nz and every used column is in [0, k) with a finite change.
func (p *Pending) Check(n, k, nz int) error {
	if p == nil {
		return errors.New("no pending changes")
	}
	if p.NZ != nz {
		return fmt.Errorf("pending changes with %d slots a row, want %d (2·Moves)", p.NZ, nz)
	}
	if len(p.Count) != n || len(p.Col) != n*nz || len(p.Val) != n*nz {
		return fmt.Errorf("pending changes of %d, %d and %d values, want %d counts and %d columns and values",
			len(p.Count), len(p.Col), len(p.Val), n, n*nz)
	}
	for i, c := range p.Count {
		if int(c) > nz {
			return fmt.Errorf("row %d has %d pending changes, at most %d fit", i, c, nz)
		}
		for e, col := range p.Col[i*nz : i*nz+int(c)] {
			if col < 0 || int(col) >= k {
				return fmt.Errorf("row %d: pending change %d in column %d, want one in [0, %d)", i, e, col, k)
			}
			if v := p.Val[i*nz+e]; math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("row %d: pending change %d is %v", i, e, v)
			}
		}
	}
	return nil
}

// DefaultSettings returns settings with the exact line search, an absolute
// gap tolerance of 1e-6, no function tolerance, at most 1000 iterations and a
// P·W refresh every 100.
func DefaultSettings() Settings {
	return Settings{Step: StepExact, GapTol: 1e-6, MaxIter: 1000, Refresh: 100, Workers: 1}
}

// Iteration is the record of one iteration, passed to Settings.Recorder.
// Objective and Gap are those of the iterate before the step.
type Iteration struct {
	Iter      int           // 0-based iteration number
	Objective float64       // f(W_t)
	Gap       float64       // Frank-Wolfe gap at W_t
	Step      float64       // λ_t; 0 on the final record
	Final     bool          // the run stops at this iterate and takes no step
	Passes    int           // tile passes so far, this iteration's included
	PassTime  time.Duration // duration of this iteration's tile pass
	Elapsed   time.Duration // since the start of Minimize
}

// Result is the outcome of a run. Objective and Gap are computed from a
// P·W pass at the returned W (a final refresh unless the last pass was one),
// free of the rounding of the carried P·W. A run stops on GapTolerance only
// after this check.
type Result struct {
	Status     Status
	Iterations int // steps taken
	Passes     int // tile passes over P: the first P·W, one P·S per iteration, and the P·W refreshes
	Objective  float64
	Gap        float64
	FrobSq     float64 // ||P||_F^2
	MaxRowSum  float64 // largest row sum of P
	Runtime    time.Duration
}
