package solver

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unread is a CSV input that records whether it was read.
type unread struct{ read bool }

func (u *unread) Read(p []byte) (int, error) {
	u.read = true
	return 0, io.EOF
}

// TestSolveRefusesModel checks that a Model that no model of the solve
// could be saved in is refused before the input is read, with one line
// naming Options.Model, as ssnmf solve refuses its -model: its parent
// missing or a file, a file, a directory of other files, a Workdir that
// is the Model or inside it, P read from a file (with the features or
// without), and a method whose W may leave the simplex.
func TestSolveRefusesModel(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	other := filepath.Join(dir, "other")
	for _, p := range []string{file, filepath.Join(other, "x.csv")} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := filepath.Join(dir, "m")
	for _, tc := range []struct {
		name  string
		opt   Options
		input bool // an Input of rows, else P of File alone
		want  string
	}{
		{"parent missing", Options{Model: filepath.Join(dir, "none", "m")}, true, "Options.Model: model directory " + filepath.Join(dir, "none", "m") + ": the directory it goes in: stat " + filepath.Join(dir, "none")},
		{"parent a file", Options{Model: filepath.Join(file, "m")}, true, "Options.Model: model directory " + filepath.Join(file, "m") + ": stat " + filepath.Join(file, "m") + ": not a directory"},
		{"a file", Options{Model: file}, true, "Options.Model: model directory " + file + ": exists and is not a directory"},
		{"other files", Options{Model: other}, true, "Options.Model: model directory " + other + ": holds x.csv, which is no part of a model"},
		{"workdir is model", Options{Model: m, Workdir: m}, true, "Options.Model " + m + ": the Workdir " + m + " is the model directory or inside it"},
		{"workdir inside model", Options{Model: m, Workdir: filepath.Join(m, "w")}, true, "the Workdir " + filepath.Join(m, "w") + " is the model directory or inside it"},
		{"P of a file alone", Options{Model: m, File: filepath.Join(dir, "edges.csv")}, false, "Options.Model " + m + ": P is read from Options.File"},
		{"P of a file, with the features", Options{Model: m, File: filepath.Join(dir, "edges.csv")}, true, "Options.Model " + m + ": P is read from Options.File"},
		{"penalty", Options{Model: m, Method: "penalty"}, true, "Options.Model " + m + ": the W of Options.Method penalty may leave the simplex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in Input
			csv := &unread{}
			if tc.input {
				in.CSV = csv
			}
			tc.opt.K = 2
			_, err := Solve(context.Background(), in, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line with %q", err, tc.want)
			}
			if csv.read {
				t.Error("the input was read before the Model was refused")
			}
			if _, err := os.Stat(m); err == nil {
				t.Errorf("%s was made", m)
			}
		})
	}
}
