package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/solver"
)

// TestResumeAcrossSolve checks that a checkpoint of ssnmf solve, whose
// settings are a command line, is refused by solver.Solve's
// Options.Resume, and one of solver.Solve, whose settings are its
// Options, by -resume: each with one line saying whose it is and what
// resumes it.
func TestResumeAcrossSolve(t *testing.T) {
	small, _ := filepath.Abs(filepath.Join("testdata", "small.csv"))
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		made   func(t *testing.T, work string)  // a checkpoint in work
		resume func(work string) (string, bool) // the resume's error and whether it is one line of usage
		want   string
	}{
		{"the command's, by Solve", func(t *testing.T, work string) {
			if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-workdir", work, "-max-time", "1ns", small); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
		}, func(work string) (string, bool) {
			_, err := solver.Solve(ctx, solver.Input{Path: small}, solver.Options{K: 3, Workdir: work, Resume: true})
			if err == nil {
				return "", false
			}
			return err.Error(), !strings.Contains(err.Error(), "\n")
		}, "Options.Resume: the checkpoint in WORK is of ssnmf solve, whose settings are a command line, not Options: resume it with ssnmf solve -resume WORK"},
		{"Solve's, by the command", func(t *testing.T, work string) {
			opt := solver.Options{K: 3, Workdir: work, MaxTime: time.Nanosecond, CheckpointEvery: 1}
			if _, err := solver.Solve(ctx, solver.Input{Path: small}, opt); err != nil {
				t.Fatal(err)
			}
		}, func(work string) (string, bool) {
			code, _, stderr := ssnmf(t, "solve", "-q", "-resume", work)
			return stderr, code == exitUsage && strings.Count(stderr, "\n") == 1
		}, "-resume: checkpoint WORK/checkpoint.ssnmf keeps no command line: it is of a Go program's run (solver.Solve, whose Options.Resume resumes it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			tc.made(t, work)
			msg, oneLine := tc.resume(work)
			if want := strings.ReplaceAll(tc.want, "WORK", work); !oneLine || !strings.Contains(msg, want) {
				t.Errorf("resumed: %q; want one line with %q", msg, want)
			}
		})
	}
}
