package main

import (
	"io"
	"testing"
)

// TestOptionFlags checks that a flag marked as the option of a field of
// solver.Options is refused, out of the field's range, with the message
// of solver.Options.Check named by the flag, and that the first of two
// is named as before the checks moved (the ranges of numbers first).
func TestOptionFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-method", "nope"}, `-method "nope": want rowcd, fw, pgd, penalty, kmeans or spectral`},
		{[]string{"-sweep-order", "x"}, `-sweep-order must be auto, partition or input, have "x"`},
		{[]string{"-max-time", "-1s"}, "-max-time must be >= 0, have -1s"},
		{[]string{"-init", "best"}, `-init: unknown init "best" (want random or corners) (or kmeans, spectral, auto)`},
		{[]string{"-ftol", "-1"}, "-ftol must be >= 0, have -1"},
		{[]string{"-frtol", "NaN"}, "-frtol must be >= 0, have NaN"},
		{[]string{"-rows", "-1"}, "-rows must be >= 0, have -1"},
		{[]string{"-restarts", "-2"}, "-starts must be >= 0, have -2"},
		{[]string{"-init-starts", "-2"}, "-init-starts must be >= 0, have -2"},
		{[]string{"-checkpoint-every", "-1"}, "-checkpoint-every must be >= 0, have -1"},
		{[]string{"-starts", "-1", "-ftol", "-1"}, "-ftol must be >= 0, have -1"},
		{[]string{"-method", "nope", "-starts", "-1"}, "-starts must be >= 0, have -1"},
		{[]string{"-k", "-1"}, "-k must be >= 1, have -1"},
	} {
		_, err := parseSolve(tc.args, io.Discard)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %s", tc.args, err, tc.want)
		}
	}
}
