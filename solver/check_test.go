package solver

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// checkCase is a case of TestCheck: Options and the field Check names
// ("" for none), with a part of its message.
type checkCase struct {
	name  string
	opt   Options
	field string
	msg   string
}

// checkCases are the cases of TestCheck.
func checkCases() []checkCase {
	return []checkCase{
		{"zero", Options{}, "", ""},
		{"set", Options{K: 3, Method: "rowcd", Init: "corners", SweepOrder: SweepInput, Scale: Scale{Rule: ScaleMass}, KNNRecall: 1}, "", ""},
		{"method", Options{Method: "nope"}, "Method", ` "nope": want `},
		{"k", Options{K: -1}, "K", " must be >= 0, have -1"},
		{"neighbors 1", Options{Neighbors: 1}, "Neighbors", " must be >= 2, have 1: the neighbours of a row include the row itself"},
		{"neighbors negative", Options{Neighbors: -2}, "Neighbors", " must be >= 0, have -2"},
		{"memory", Options{Memory: -5}, "Memory", " must be >= 0, have -5"},
		{"tol", Options{Tol: math.NaN()}, "Tol", " must be a number (a negative one turns its rule off), have NaN"},
		{"init", Options{Init: "nope"}, "Init", "(or kmeans, spectral, auto)"},
		{"sweep order", Options{SweepOrder: "nope"}, "SweepOrder", ` must be auto, partition or input, have "nope"`},
		{"scale rule", Options{Scale: Scale{Rule: "nope"}}, "Scale.Rule", ` must be auto, sizes or mass, have "nope"`},
		{"resume", Options{Resume: true}, "Resume", " goes on from the checkpoint in Workdir: give the Workdir"},
		{"max time", Options{MaxTime: -time.Second}, "MaxTime", " must be >= 0, have -1s"},
		{"gamma NaN", Options{Gamma: math.NaN()}, "Gamma", " must be >= 0, have NaN"},
		{"recall", Options{KNNRecall: 1.5}, "KNNRecall", " must be in [0, 1], have 1.5"},
		{"scale times", Options{Scale: Scale{Times: -1}}, "Scale.Times", " must be >= 0, have -1"},
		{"first of two", Options{K: -1, MaxTime: -1}, "K", " must be >= 0, have -1"},
	}
}

// TestCheck checks that Check names the first field out of range, with
// its message, and passes the zero Options and resolved ones.
func TestCheck(t *testing.T) {
	for _, tc := range checkCases() {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opt.Check()
			var fe *FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("Check = %v, want nil", err)
			case tc.field == "":
				return
			case !errors.As(err, &fe):
				t.Fatalf("Check = %v, want a *FieldError", err)
			case fe.Field != tc.field || !strings.Contains(fe.Msg, tc.msg):
				t.Errorf("Check = %q %q, want field %q with %q", fe.Field, fe.Msg, tc.field, tc.msg)
			case err.Error() != "Options."+fe.Field+fe.Msg:
				t.Errorf("Error = %q, want Options.%s%s", err, fe.Field, fe.Msg)
			}
		})
	}
}
