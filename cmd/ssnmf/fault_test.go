package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/store/checkpoint"
	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/store/vfs/errorfs"
)

// TestSolveFaults fails each operation of a solve's writes in turn (its
// -out, -summary and -trace files and its checkpoints, through errorfs).
// Every run either completes or stops with a one-line error; no output is
// half-written and no temporary file is left; and the checkpoint left in
// the work directory, if any, loads and resumes to the bits of a run
// without faults. It reports the count of fault points tried.
func TestSolveFaults(t *testing.T) {
	base := t.TempDir()
	ctx := context.Background()
	paths := func(dir string) (out, sum, tr, work string) {
		return filepath.Join(dir, "w.csv"), filepath.Join(dir, "s.json"), filepath.Join(dir, "t.csv"), filepath.Join(dir, "work")
	}
	args := func(dir string) []string {
		out, sum, tr, work := paths(dir)
		return []string{"-q", "-max-iter", "6", "-checkpoint-every", "2", "-workdir", work, "-out", out, "-summary", sum, "-trace", tr}
	}
	ref := filepath.Join(base, "ref")
	if err := os.Mkdir(ref, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := solveFS(ctx, nil, args(ref), io.Discard, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	refOut, _, refTrace, _ := paths(ref)
	want, _ := os.ReadFile(refOut)
	wantTrace, _ := os.ReadFile(refTrace)

	points, stopped, resumed := 0, 0, 0
	trial, dir := 0, ""
	ops, err := errorfs.Each(vfs.OS{}, func(fsys *errorfs.FS) error {
		trial++
		dir = filepath.Join(base, fmt.Sprint(trial))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return solveFS(ctx, fsys, args(dir), io.Discard, io.Discard, nil)
	}, func(failAt int, fault *errorfs.Fault, err error) {
		out, sum, tr, work := paths(dir)
		points++
		if err != nil {
			stopped++
			if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "injected fault") {
				t.Fatalf("fault %d (%v): error %q, want one line with the fault", failAt, fault, err)
			}
		}
		// Every output is absent or whole: W as without faults, the trace
		// as long (its seconds differ), the summary JSON.
		for _, f := range []struct {
			path string
			want []byte
		}{{out, want}, {tr, wantTrace}, {sum, nil}} {
			b, rerr := os.ReadFile(f.path)
			switch {
			case rerr != nil && err == nil:
				t.Fatalf("fault %d (%v): the run completed without %s", failAt, fault, f.path)
			case rerr != nil:
			case f.path == tr && bytes.Count(b, []byte("\n")) != bytes.Count(f.want, []byte("\n")):
				t.Fatalf("fault %d (%v): %s has %d lines, a whole trace %d", failAt, fault, f.path, bytes.Count(b, []byte("\n")), bytes.Count(f.want, []byte("\n")))
			case f.path == out && !bytes.Equal(b, f.want):
				t.Fatalf("fault %d (%v): %s is not the whole output", failAt, fault, f.path)
			case f.want == nil && !json.Valid(b):
				t.Fatalf("fault %d (%v): %s is not whole JSON", failAt, fault, f.path)
			}
		}
		for _, d := range []string{dir, work} {
			if tmp, _ := filepath.Glob(filepath.Join(d, ".*tmp*")); len(tmp) > 0 {
				t.Fatalf("fault %d (%v): temporary files left: %v", failAt, fault, tmp)
			}
		}
		// A checkpoint left behind loads, and the run resumed from it ends
		// as the run without faults.
		ck := filepath.Join(work, solver.CheckpointFile)
		if err == nil || !fileExists(ck) {
			return
		}
		if _, lerr := checkpoint.Load(ck, func(n, k int) ([]float64, []float64, error) {
			return make([]float64, n*k), make([]float64, n*k), nil
		}); lerr != nil {
			t.Fatalf("fault %d (%v): the checkpoint left does not load: %v", failAt, fault, lerr)
		}
		// A fault in marking the run finished, once the outputs are
		// written, may leave the mark in place (a failed sync of the
		// directory after the rename): a resume then writes nothing.
		var saved solver.Saved
		if raw, serr := checkpoint.ReadSettings(ck); serr == nil && json.Unmarshal(raw, &saved) == nil && saved.Finished != nil {
			if rerr := solveFS(ctx, nil, []string{"-q", "-resume", work}, io.Discard, io.Discard, nil); rerr != nil {
				t.Fatalf("fault %d (%v): resume of the finished run: %v", failAt, fault, rerr)
			}
			sameFile(t, fmt.Sprintf("fault %d (%v): W of the finished run", failAt, fault), out, refOut)
			return
		}
		out2 := filepath.Join(dir, "resumed.csv")
		if rerr := solveFS(ctx, nil, []string{"-q", "-resume", work, "-out", out2}, io.Discard, io.Discard, nil); rerr != nil {
			t.Fatalf("fault %d (%v): resume: %v", failAt, fault, rerr)
		}
		sameFile(t, fmt.Sprintf("fault %d (%v): W resumed", failAt, fault), out2, refOut)
		resumed++
	})
	if err != nil {
		t.Fatalf("no fault at %d, past the %d operations of a run: %v", ops+1, ops, err)
	}
	out, _, _, _ := paths(dir)
	sameFile(t, "W of a run without faults", out, refOut)
	if points < 20 || resumed == 0 {
		t.Fatalf("%d fault points, %d resumed; want at least 20 and one", points, resumed)
	}
	t.Logf("fault points tried in a solve: %d (%d stopped the run with one line, %d of them resumed from the checkpoint left to the same W)", points, stopped, resumed)
}
