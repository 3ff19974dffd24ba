package fw

import (
	"errors"
	"math"
	"time"

	"github.com/ssnmf/ssnmf/internal/enum"
)

// Problem is a simplicial symmetric NMF problem.
type Problem struct {
	P Affinity // the affinity matrix
	K int      // number of clusters, the columns of W
}

// StepRule chooses the step size λ in [0, 1] of a Frank-Wolfe iteration.
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
func (s StepRule) String() string { return enum.Name(stepNames[:], s, "StepRule") }

// ParseStepRule returns the rule named s ("exact", "curvature" or "open-loop").
func ParseStepRule(s string) (StepRule, error) {
	return enum.Parse[StepRule](stepNames[:], s, "step rule")
}

// Status says why a run stopped.
type Status int

const (
	// NotTerminated means the run has not stopped.
	NotTerminated Status = iota
	// GapTolerance means the Frank-Wolfe gap, computed from a P·W pass,
	// fell to Settings.GapTol or below: W is an approximate KKT point.
	GapTolerance
	// FunctionConvergence means the objective changed by less than
	// Settings.FuncTol between two iterations, or the method could make
	// no more progress (a line search found no decrease).
	FunctionConvergence
	// IterationLimit means Settings.MaxIter iterations were taken, or
	// Settings.MaxPasses passes were made.
	IterationLimit
	// Stopped means Settings.Stop asked the run to stop before it
	// converged; the last checkpoint continues it.
	Stopped
	// RelativeGapTolerance means the Frank-Wolfe gap, computed from a P·W
	// pass, fell to Settings.RelGapTol times the objective or below.
	RelativeGapTolerance
	// RelativeFunctionConvergence means the objective changed by at most
	// Settings.RelFuncTol times its value over an iteration.
	RelativeFunctionConvergence
	// TimeLimit means the run had taken Settings.MaxTime; it ends at its
	// iterate as at any other stop, with a checkpoint that continues it.
	TimeLimit
	// ModelGapTolerance means the Frank-Wolfe gap, computed from a P·W
	// pass, fell to Settings.ModelGapTol times ¼||WᵀW||_F² or below.
	ModelGapTolerance
)

var statusNames = [...]string{NotTerminated: "not-terminated", GapTolerance: "gap", FunctionConvergence: "ftol", IterationLimit: "max-iter", Stopped: "stopped",
	RelativeGapTolerance: "rel-gap", RelativeFunctionConvergence: "rel-ftol", TimeLimit: "max-time", ModelGapTolerance: "model-gap"}

// String returns a short name of the status, as the summary reports it.
func (s Status) String() string { return enum.Name(statusNames[:], s, "Status") }

// Converged reports whether the status certifies an approximate KKT point.
func (s Status) Converged() bool {
	return s == GapTolerance || s == RelativeGapTolerance || s == ModelGapTolerance
}

// Defaults of Settings, taken where a field is zero.
const (
	DefaultGapTol  = 1e-6
	DefaultMaxIter = 1000
	DefaultRefresh = 100
)

// Settings control a run of any method; what is particular to a method is
// a field of the method's own type (FrankWolfe, RowCD, PGD, Penalty). The
// zero value is ready for use: a zero field means its documented default.
//
// The rules that end a run are tested at the start of every iteration, in
// this order: the gap, absolute and relative (on a gap computed from a P·W
// pass; an estimate at or below the tolerance is first confirmed by a
// pass), the change of the objective, absolute and relative, the
// iteration limit, the pass budget and the time limit.
type Settings struct {
	// GapTol stops the run when the Frank-Wolfe gap is <= GapTol
	// (absolute). 0 means DefaultGapTol; a negative value disables the
	// test.
	GapTol float64
	// RelGapTol stops the run when the Frank-Wolfe gap is <= RelGapTol·f,
	// f the objective; 0 disables the test. The objective has the scale
	// of ||P||², so a relative gap means the same on any data.
	RelGapTol float64
	// ModelGapTol stops the run when the Frank-Wolfe gap is
	// <= ModelGapTol·¼||WᵀW||_F² (Estimate.Model); 0 disables the test.
	// Unlike the objective, which is mostly the constant ¼||P||², that
	// term and the gap both grow as n²/k, so the same tolerance asks the
	// same of a run at any n.
	ModelGapTol float64
	// FuncTol stops the run when |f_t - f_{t-1}| < FuncTol; 0 disables
	// the test.
	FuncTol float64
	// RelFuncTol stops the run when |f_t - f_{t-1}| <= RelFuncTol·|f_t|;
	// 0 disables the test.
	RelFuncTol float64
	// MaxTime, if > 0, stops the run with TimeLimit once it has run this
	// long (a resumed run counts the time before its checkpoint), after a
	// checkpoint if Checkpoint is set.
	MaxTime time.Duration
	// MaxIter is the most iterations a run takes. 0 means
	// DefaultMaxIter; a negative value takes none: the run only
	// evaluates its starting point.
	MaxIter int
	// Refresh is the number of iterations between the full P·W passes
	// that free a method's carried products of their rounding (Method's
	// Refresh, after the iteration's record). 0 means DefaultRefresh; a
	// negative value means none but those that confirm a gap stop and end
	// the run.
	Refresh int
	// MaxPasses, if > 0, stops the run with IterationLimit once it has
	// made this many passes over P (tested between iterations): a budget
	// for large problems.
	MaxPasses int
	// Workers is the number of goroutines of the row passes; 1 if 0. Any
	// number gives the same bits.
	Workers int
	// Recorder, if not nil, gets the record of every iteration and then
	// the final one. An error ends the run.
	Recorder func(Iteration) error

	// PW is storage for the n×k matrix P·W (for example a memory-mapped
	// file); nil allocates it in memory. A method's other n×k matrices
	// are fields of the method.
	PW []float64

	// Checkpoint, if not nil, is called with the run's state at the start
	// of every CheckpointEvery-th iteration (never if CheckpointEvery is
	// 0; not at the first iteration of a run or of a resumed run) and
	// when Stop stops the run, if the method implements Checkpointer. A
	// run resumed from that state ends with the same bits as one never
	// interrupted. An error ends the run.
	Checkpoint      func(*State) error
	CheckpointEvery int

	// Stop, if not nil, is called at the start of every iteration, after
	// the tests above, and by RowCD within a sweep, after every 65,536
	// visits or so (a sweep of a large graph out of core takes minutes).
	// If it returns true, the run calls Checkpoint and ends with status
	// Stopped, without a final pass or record; within a sweep, the
	// checkpoint holds the sweep part way (RowCDState.Part), and a run
	// resumed from it goes on with the sweep to the same bits.
	Stop func() bool

	// Resume, if not nil, continues the run that saved it: the point w
	// given to Minimize and PW must hold the State's W and PW, the method
	// must be of the kind that saved it, and the problem, the method's
	// parameters and the settings that shape the iterates (GapTol,
	// FuncTol, Refresh) must be those of the run that saved it; Workers, MaxIter,
	// MaxPasses and CheckpointEvery may differ. The first P·W pass is
	// skipped.
	Resume *State
}

// setting returns the value in force of a field v whose zero value means
// def and whose negative values mean off.
func setting[T int | float64](v, def, off T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return off
	}
	return v
}

// gapTol returns the gap tolerance in force; -Inf for no test.
func (s *Settings) gapTol() float64 { return setting(s.GapTol, DefaultGapTol, math.Inf(-1)) }

// refresh returns the period of the P·W refreshes in force; 0 for none.
func (s *Settings) refresh() int { return setting(s.Refresh, DefaultRefresh, 0) }

// maxIter returns the iteration limit in force.
func (s *Settings) maxIter() int { return setting(s.MaxIter, DefaultMaxIter, 0) }

func (s *Settings) workers() int { return max(1, s.Workers) }

// check reports a setting that no run can use.
func (s *Settings) check() error {
	switch {
	case math.IsNaN(s.GapTol) || math.IsNaN(s.FuncTol) || s.FuncTol < 0:
		return errors.New("NaN GapTol or FuncTol, or negative FuncTol")
	case !(s.RelGapTol >= 0) || !(s.ModelGapTol >= 0) || !(s.RelFuncTol >= 0) || s.MaxTime < 0:
		return errors.New("NaN or negative RelGapTol, ModelGapTol, RelFuncTol or MaxTime")
	case s.MaxPasses < 0 || s.CheckpointEvery < 0 || s.Workers < 0:
		return errors.New("negative MaxPasses, CheckpointEvery or Workers")
	}
	return nil
}

// Iteration is the record of one iteration, passed to Settings.Recorder.
// Objective and Gap are those of the iterate before the step; a method
// may report an estimate of the gap made during the iteration instead
// (RowCD). The final record is made at the iterate the run stops at, with
// the objective and gap of the Result.
type Iteration struct {
	Iter      int           // 0-based iteration number
	Objective float64       // f(W_t)
	Gap       float64       // Frank-Wolfe gap at W_t, or the method's estimate of it
	Step      float64       // the method's step: λ_t, the mass moved, the step length; 0 on the final record
	Final     bool          // the run stops at this iterate and takes no step
	Passes    int           // passes over P so far, this iteration's included
	Moved     int           // rows whose largest membership (first in a tie) the step changed; 0 on the final record
	Model     float64       // ¼||W_tᵀW_t||_F², as Estimate.Model
	PassTime  time.Duration // duration of this iteration's passes
	Elapsed   time.Duration // since the start of the run
}

// Result is the outcome of a run. Objective and Gap are computed from a
// P·W pass at the returned W (a final refresh unless the last pass was
// one), free of the rounding of carried products. A run stops on
// GapTolerance only after such a check.
type Result struct {
	Status     Status
	Iterations int // iterations taken
	Passes     int // passes over P: the first P·W, those of the iterations, refreshes and the end
	Objective  float64
	Gap        float64
	Model      float64 // ¼||WᵀW||_F², as Estimate.Model
	FrobSq     float64 // ||P||_F^2
	MaxRowSum  float64 // largest row sum of P
	Runtime    time.Duration
}
