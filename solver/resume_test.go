package solver

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store/checkpoint"
)

// threeGroups returns 60 rows in three groups apart, for a solve of
// k = 3 that a checkpoint can stop.
func threeGroups() [][]float64 {
	rng := rand.New(rand.NewPCG(3, 4))
	var rows [][]float64
	for _, c := range [][2]float64{{0, 0}, {20, 0}, {0, 20}} {
		for range 20 {
			rows = append(rows, []float64{c[0] + rng.NormFloat64(), c[1] + rng.NormFloat64()})
		}
	}
	return rows
}

// checkpointed makes a checkpoint of a Solve of rows with the settings
// opt in a new Workdir, stopped by its time limit, and returns the Workdir.
func checkpointed(t *testing.T, rows [][]float64, opt Options) string {
	t.Helper()
	opt.Workdir, opt.CheckpointEvery, opt.MaxTime = t.TempDir(), 1, time.Nanosecond
	res, err := Solve(context.Background(), Input{Rows: rows}, opt)
	if err != nil || res.Status != fw.TimeLimit {
		t.Fatalf("a Solve of 1ns: %v; want the time limit", err)
	}
	return opt.Workdir
}

// setArgs rewrites the Args of the checkpoint in dir.
func setArgs(t *testing.T, dir string, args []string) {
	t.Helper()
	path := filepath.Join(dir, CheckpointFile)
	var w, pw []float64
	ck, err := checkpoint.Load(path, func(n, k int) ([]float64, []float64, error) {
		w, pw = make([]float64, n*k), make([]float64, n*k)
		return w, pw, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ck.State.W, ck.State.PW = w, pw
	var s Saved
	if err := json.Unmarshal(ck.Settings, &s); err != nil {
		t.Fatal(err)
	}
	s.Args = args
	settings, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.Save(path, &ck.State, settings, ck.Trace); err != nil {
		t.Fatal(err)
	}
}

// TestSolveResumeOptions checks that Options.Resume goes on from the
// checkpoint of a Solve with the same settings, the fields a resume may
// change changed and the defaults given or not, and refuses, with one
// line naming the field and both values, a call whose settings that
// shape the result differ; and that it refuses a checkpoint of ssnmf
// solve (a command line) and one that keeps no Options.
func TestSolveResumeOptions(t *testing.T) {
	rows := threeGroups()
	base := Options{K: 3, Seed: 1, Starts: 2, Method: "rowcd"}
	for _, tc := range []struct {
		name   string
		change func(o *Options)
		args   []string // the checkpoint's Args, if not nil
		want   string   // "" for a resume that works
	}{
		{"same", func(o *Options) {}, nil, ""},
		{"resumable fields", func(o *Options) {
			o.Workers, o.Memory, o.MaxIter, o.MaxTime, o.CheckpointEvery = 1, 1<<30, 500, time.Hour, 3
		}, nil, ""},
		{"defaults given", func(o *Options) {
			o.Init, o.Tol, o.Mtol, o.Neighbors, o.Scale, o.Moves = InitAuto, DefaultTol, DefaultMtol, 30, Scale{Rule: ScaleAuto, Times: DefaultScaleTimes}, DefaultMoves
		}, nil, ""},
		{"k from the checkpoint", func(o *Options) { o.K = 0 }, nil, ""},
		{"seed", func(o *Options) { o.Seed = 2 }, nil, "Options.Resume: the checkpoint's run has Options.Seed 1, this call 2"},
		{"method", func(o *Options) { o.Method = "fw" }, nil, "Options.Method rowcd, this call fw"},
		{"k", func(o *Options) { o.K = 4 }, nil, "Options.K 3, this call 4"},
		{"starts", func(o *Options) { o.Starts = 3 }, nil, "Options.Starts 2, this call 3"},
		{"init", func(o *Options) { o.Init = "random" }, nil, "Options.Init auto, this call random"},
		{"scale", func(o *Options) { o.Scale = Scale{Rule: ScaleMass} }, nil, "Options.Scale auto:2, this call mass:1"},
		{"tol", func(o *Options) { o.Tol = 1e-3 }, nil, "Options.Tol 1e-06, this call 0.001"},
		{"mtol off", func(o *Options) { o.Mtol = -1 }, nil, "Options.Mtol 0.001, this call -1"},
		{"ftol", func(o *Options) { o.Ftol = 1e-9 }, nil, "Options.Ftol 0, this call 1e-09"},
		{"neighbors", func(o *Options) { o.Neighbors = 10 }, nil, "Options.Neighbors 30, this call 10"},
		{"connectivity", func(o *Options) { o.Connectivity = true }, nil, "Options.Connectivity false, this call true"},
		{"gaussian", func(o *Options) { o.Gaussian = true }, nil, "Options.Gaussian false, this call true"},
		{"raw", func(o *Options) { o.Raw = true }, nil, "Options.Raw false, this call true"},
		{"step", func(o *Options) { o.Step = fw.StepCurvature }, nil, "Options.Step exact, this call curvature"},
		{"file", func(o *Options) { o.File = "/x/edges.csv" }, nil, `Options.File "", this call /x/edges.csv`},
		{"a command line", func(o *Options) {}, []string{"-k=3", "-seed=1", "/x/in.csv"}, "the checkpoint in WORKDIR is of ssnmf solve"},
		{"no Options kept", func(o *Options) {}, []string{}, "keeps no Options"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := checkpointed(t, rows, base)
			if tc.args != nil {
				setArgs(t, dir, tc.args)
			}
			opt := base
			tc.change(&opt)
			opt.Workdir, opt.Resume = dir, true
			_, err := Solve(context.Background(), Input{Rows: rows}, opt)
			want := strings.ReplaceAll(tc.want, "WORKDIR", dir)
			switch {
			case want == "" && err != nil:
				t.Fatalf("resume: %v", err)
			case want == "":
			case err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "Options.Resume: "):
				t.Errorf("err = %v, want one line of Options.Resume with %q", err, want)
			case !errors.As(err, new(*CheckpointError)):
				t.Errorf("err = %v, want a CheckpointError", err)
			}
		})
	}
}
