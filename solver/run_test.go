package solver

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store"
)

// newTestRun sets up P of yeast, scaled, and the workspace in dir, for a
// Run of opt with stop and saved; the test's cleanup closes them.
func newTestRun(t *testing.T, dir string, opt Options, stop func() bool, saved *Saved) *Run {
	t.Helper()
	ctx := context.Background()
	tab, err := Input{Path: yeast}.Table(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	pr, err := opt.Problem(ctx, tab, Setup{Dir: dir, Name: "yeast", Scratch: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close() })
	r := &Run{Options: opt, Problem: pr, Meter: &Meter{Affinity: pr.Affinity}, Stop: stop, Saved: saved}
	if err := r.Scale(ctx); err != nil {
		t.Fatal(err)
	}
	if r.Workspace, err = NewWorkspace(dir, tab.N, opt.K, 1<<30); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Workspace.Close)
	return r
}

// runIn runs newTestRun's Run and returns it, its result and W in the
// input's order.
func runIn(t *testing.T, dir string, opt Options, stop func() bool, saved *Saved) (*Run, *fw.Result, []float64) {
	t.Helper()
	r := newTestRun(t, dir, opt, stop, saved)
	res, err := r.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.Workspace.InputOrder(r.Problem.Order)
	if err != nil {
		t.Fatal(err)
	}
	return r, res, slices.Clone(w)
}

// TestRunResume checks that a Run stopped in either of its two starts
// saves a checkpoint from which a Run with its settings (ReadSaved) ends
// with the bits of a run never stopped: W, the objective and the starts.
func TestRunResume(t *testing.T) {
	opt := Options{K: 10, Workers: 2, Starts: 2, CheckpointEvery: 7}
	_, ref, refW := runIn(t, t.TempDir(), opt, nil, nil)
	for _, tc := range []struct {
		name  string
		polls int // the Stop polls before it asks to stop
		start int // the start the checkpoint is of
	}{{"in start 0", 10, 0}, {"in start 1", 50, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, polls := t.TempDir(), 0
			stop := func() bool { polls++; return polls > tc.polls }
			first, res, _ := runIn(t, dir, opt, stop, nil)
			if res.Status != fw.Stopped || !first.Checkpointed {
				t.Fatalf("status %v, checkpointed %v: want stopped with a checkpoint", res.Status, first.Checkpointed)
			}
			saved, err := ReadSaved(dir)
			if err != nil {
				t.Fatal(err)
			}
			if saved.Start != tc.start || saved.K != opt.K || saved.Finished != nil {
				t.Fatalf("checkpoint of start %d, k %d, finished %v: want start %d, k %d, not finished", saved.Start, saved.K, saved.Finished, tc.start, opt.K)
			}
			r, res, w := runIn(t, dir, opt, nil, saved)
			if math.Float64bits(res.Objective) != math.Float64bits(ref.Objective) || len(r.Starts) != 2 || !slices.Equal(w, refW) {
				t.Errorf("resumed: objective %v, %d starts; want %v, 2 and the same W as a run never stopped", res.Objective, len(r.Starts), ref.Objective)
			}
		})
	}
}

// TestRunRefusesCheckpoint checks that a checkpoint that does not fit the
// run is a CheckpointError.
func TestRunRefusesCheckpoint(t *testing.T) {
	opt := Options{K: 10, Workers: 2, Starts: 2}
	dir, polls := t.TempDir(), 0
	runIn(t, dir, opt, func() bool { polls++; return polls > 10 }, nil)
	saved, err := ReadSaved(dir)
	if err != nil {
		t.Fatal(err)
	}
	saved.Start = 5
	r := newTestRun(t, dir, opt, nil, saved)
	var ce *CheckpointError
	if _, err := r.Solve(context.Background()); !errors.As(err, &ce) {
		t.Errorf("err = %v, want a CheckpointError", err)
	}
}

// TestProblem checks Options.Problem's set-up: the input's checksum kept
// and checked against a checkpoint's before P is built, and the InputRead
// hook, whose error ends the set-up.
func TestProblem(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	opt := Options{K: 3, Neighbors: 5}
	var read int
	for _, tc := range []struct {
		name  string
		setup Setup
		want  func(err error) bool
	}{
		{"new", Setup{Dir: dir}, func(err error) bool { return err == nil }},
		{"resumed", Setup{Dir: dir, Saved: &Saved{N: 1484, InputSum: 1}}, func(err error) bool { return errors.As(err, new(*CheckpointError)) }},
		{"refused when read", Setup{Dir: dir, InputRead: func(*store.Table) error { read++; return errors.New("no") }},
			func(err error) bool { return err != nil && err.Error() == "no" && read == 1 }},
	} {
		tab, err := Input{Path: yeast}.Table(dir)
		if err != nil {
			t.Fatal(err)
		}
		sum := InputSum(tab)
		pr, err := opt.Problem(ctx, tab, tc.setup)
		if !tc.want(err) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err == nil {
			if pr.InputSum != sum || pr.N() != tab.N {
				t.Errorf("%s: input checksum %08x, want %08x; n = %d", tc.name, pr.InputSum, sum, pr.N())
			}
			pr.Close()
		}
		tab.Close()
	}
}

// TestRunSaveModel checks that SaveModel saves the run's model, of its k
// and rows, and that a directory that holds something else is refused
// with an error naming it.
func TestRunSaveModel(t *testing.T) {
	dir := t.TempDir()
	r, _, _ := runIn(t, dir, Options{K: 4, Workers: 2, Starts: 1, MaxIter: 5}, nil, nil)
	meta, err := r.SaveModel(context.Background(), filepath.Join(dir, "m"), "yeast")
	if err != nil {
		t.Fatal(err)
	}
	if meta.K != 4 || meta.N != r.Problem.N() || meta.Input != "yeast" {
		t.Errorf("meta %+v: want k = 4, the %d rows and the input yeast", meta, r.Problem.N())
	}
	if _, err := r.SaveModel(context.Background(), dir, "yeast"); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("SaveModel in the work directory: err = %v, want one naming %s", err, dir)
	}
}

// TestRunSummaryKernels checks that the summary names the kernel family
// that ran and, where a resumed run ran another, the checkpoint's.
func TestRunSummaryKernels(t *testing.T) {
	r, res, w := runIn(t, t.TempDir(), Options{K: 4, Workers: 2, Starts: 1, MaxIter: 3}, nil, nil)
	r.Kernel = "go"
	for _, tc := range []struct{ saved, want string }{{"", ""}, {"go", ""}, {"avx2", "avx2"}} {
		r.Saved = &Saved{Kernel: tc.saved}
		s, _ := r.Summary(res, w)
		if s.KernelFamily != "go" || s.CheckpointKernelFamily != tc.want || s.Precision != "float64" {
			t.Errorf("checkpoint's kernels %q: kernel_family %q, checkpoint_kernel_family %q, precision %q; want go, %q and float64",
				tc.saved, s.KernelFamily, s.CheckpointKernelFamily, s.Precision, tc.want)
		}
	}
}
