package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A signal during work that saves no checkpoint ends it at once: the
// set-up of a solve (here an exact kNN search of 10⁵ rows, seconds of
// work) and the graph command end with an error that says so, and write
// no output. A solve that ran its set-up to the end would instead stop at
// the end of its first pass and name a checkpoint.
func TestStopWithoutCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 10⁵ rows and starts their exact kNN search")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	if code, _, stderr := ssnmf(t, "gen", "-n", "100000", "-p", "16", "-k", "10", "-seed", "1", "-o", in); code != exitOK {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "out.csv")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"solve", []string{"solve", "-knn", "exact", "-k", "10", "-workdir", filepath.Join(dir, "work"), "-out", out, in},
			"stopped by a signal while setting up P, before the solve began (no checkpoint to resume from); run again"},
		{"graph", []string{"graph", "-knn", "exact", "-o", out, in}, "stopped by a signal before the end; no output was written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := time.Now().Add(300 * time.Millisecond)
			stop := func() bool { return time.Now().After(asked) }
			var stdout, stderr bytes.Buffer
			code := runStop(context.Background(), tc.args, &stdout, &stderr, stop)
			if code != exitFailure || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d, want %d with %q: %s", code, exitFailure, tc.want, stderr.String())
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("stopped run wrote %s (%v)", out, err)
			}
			t.Logf("%s", strings.TrimSpace(stderr.String()))
		})
	}
}

// A second signal cancels the context with errAborted, and the error line
// says so rather than "context canceled".
func TestAbortNamesTheSignal(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errAborted)
	var stdout, stderr bytes.Buffer
	code := runStop(ctx, []string{"solve", "-q", "-out", filepath.Join(t.TempDir(), "w.csv")}, &stdout, &stderr, func() bool { return false })
	if want := "ssnmf: aborted by a second signal ("; code != exitFailure || !strings.HasPrefix(stderr.String(), want) {
		t.Fatalf("exit %d, stderr %q; want %d and a line starting %q", code, stderr.String(), exitFailure, want)
	}
}

// The line of the first signal says what the command does: a solve stops
// with a checkpoint, the other commands save none and end now (issue 34,
// item 16d: predict and graph printed the solve's checkpoint hint).
func TestStoppingLine(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"solve", "x.csv"}, "ssnmf: stopping: a solve stops with a checkpoint", ""},
		{[]string{"predict", "-model", "m", "x.csv"}, "ssnmf: stopping: ssnmf predict saves no checkpoint, and ends now without writing its output", "solve"},
		{[]string{"graph", "-o", "e.csv", "x.csv"}, "ssnmf: stopping: ssnmf graph saves no checkpoint", "solve"},
		{[]string{"tiles", "-o", "p.arrow"}, "ssnmf: stopping: ssnmf tiles saves no checkpoint", "solve"},
		{nil, "ssnmf: stopping: ssnmf saves no checkpoint", "solve"},
	} {
		got := stoppingLine(tc.args)
		if !strings.HasPrefix(got, tc.want) || !strings.HasSuffix(got, "(signal again to abort)") || tc.not != "" && strings.Contains(got, tc.not) {
			t.Errorf("%v: %q, want it to begin %q and not to name %q", tc.args, got, tc.want, tc.not)
		}
	}
}
