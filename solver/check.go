package solver

import (
	"fmt"
	"math"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/methods"
)

// FieldError is a field of Options out of range. Its Error is
// "Options." + Field + Msg; a command that sets the field from a flag
// can name the flag instead, with the same Msg.
type FieldError struct {
	// Field is the field's name, as Options spells it: "Neighbors",
	// "Scale.Rule".
	Field string
	// Msg is what is wrong with it, starting with the space or colon
	// that follows the field's name: " must be >= 0, have -1".
	Msg string
}

func (e *FieldError) Error() string { return "Options." + e.Field + e.Msg }

// fieldCheck is one rule of Check: bad reports the field out of range,
// and msg says why.
type fieldCheck struct {
	field string
	bad   bool
	msg   func() string
}

// Check returns the first field of o out of range, as a *FieldError, or
// nil. A zero field is in range: it takes its default.
func (o Options) Check() error {
	for _, c := range o.checks() {
		if c.bad {
			return &FieldError{Field: c.field, Msg: c.msg()}
		}
	}
	return nil
}

// atLeast0 is the message of a field that must not be negative.
func atLeast0(v any) func() string {
	return func() string { return fmt.Sprintf(" must be >= 0, have %v", v) }
}

// checks are the rules of Check, in the order it applies them: the
// ranges of numbers, then the names (as ssnmf solve checks its flags).
func (o Options) checks() []fieldCheck {
	_, methodErr := methods.Lookup(o.Method)
	var initErr error
	if o.Init != "" && o.Init != InitAuto && o.Init != InitKMeans && o.Init != InitSpectral {
		_, initErr = fw.ParseStart(o.Init)
	}
	sweep := o.SweepOrder == "" || o.SweepOrder == SweepAuto || o.SweepOrder == SweepPartition || o.SweepOrder == SweepInput
	rule := o.Scale.Rule == "" || o.Scale.Rule == ScaleAuto || o.Scale.Rule == ScaleSizes || o.Scale.Rule == ScaleMass
	notNumber := func(v float64) func() string {
		return func() string { return fmt.Sprintf(" must be a number (a negative one turns its rule off), have %v", v) }
	}
	return []fieldCheck{
		{"K", o.K < 0, atLeast0(o.K)},
		{"Neighbors", o.Neighbors < 0, atLeast0(o.Neighbors)},
		{"Neighbors", o.Neighbors == 1, func() string { return " must be >= 2, have 1: the neighbours of a row include the row itself" }},
		{"Workers", o.Workers < 0, atLeast0(o.Workers)},
		{"Memory", o.Memory < 0, atLeast0(o.Memory)},
		{"Tol", math.IsNaN(o.Tol), notNumber(o.Tol)},
		{"Mtol", math.IsNaN(o.Mtol), notNumber(o.Mtol)},
		{"Rows", o.Rows < 0, atLeast0(o.Rows)},
		{"BlockSize", o.BlockSize < 0, atLeast0(o.BlockSize)},
		{"KNNProbes", o.KNNProbes < 0, atLeast0(o.KNNProbes)},
		{"KNNRounds", o.KNNRounds < 0, atLeast0(o.KNNRounds)},
		{"Moves", o.Moves < 0, atLeast0(o.Moves)},
		{"Ftol", !(o.Ftol >= 0), atLeast0(o.Ftol)},
		{"Rtol", !(o.Rtol >= 0), atLeast0(o.Rtol)},
		{"Frtol", !(o.Frtol >= 0), atLeast0(o.Frtol)},
		{"Starts", o.Starts < 0, atLeast0(o.Starts)},
		{"InitStarts", o.InitStarts < 0, atLeast0(o.InitStarts)},
		{"CheckpointEvery", o.CheckpointEvery < 0, atLeast0(o.CheckpointEvery)},
		{"Init", initErr != nil, func() string {
			return fmt.Sprintf(": %v (or %s, %s, %s)", initErr, InitKMeans, InitSpectral, InitAuto)
		}},
		{"Method", o.Method != "" && methodErr != nil, func() string { return fmt.Sprintf(" %q: want %s", o.Method, methods.List()) }},
		{"SweepOrder", !sweep, func() string {
			return fmt.Sprintf(" must be %s, %s or %s, have %q", SweepAuto, SweepPartition, SweepInput, o.SweepOrder)
		}},
		{"MaxTime", o.MaxTime < 0, atLeast0(o.MaxTime)},
		{"Scale.Rule", !rule, func() string {
			return fmt.Sprintf(" must be %s, %s or %s, have %q", ScaleAuto, ScaleSizes, ScaleMass, o.Scale.Rule)
		}},
		{"Resume", o.Resume && o.Workdir == "", func() string { return " goes on from the checkpoint in Workdir: give the Workdir" }},
		{"Gamma", !(o.Gamma >= 0), atLeast0(o.Gamma)},
		{"KNNRecall", !(o.KNNRecall >= 0 && o.KNNRecall <= 1), func() string {
			return fmt.Sprintf(" must be in [0, 1], have %v", o.KNNRecall)
		}},
		{"Scale.Factor", !(o.Scale.Factor >= 0), atLeast0(o.Scale.Factor)},
		{"Scale.Times", !(o.Scale.Times >= 0), atLeast0(o.Scale.Times)},
	}
}
