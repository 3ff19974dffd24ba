package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/fw"
)

// TestPassProgress checks the progress lines within long tile passes and
// row-CD sweeps.
func TestPassProgress(t *testing.T) {
	for _, tc := range []struct {
		name     string
		quiet    bool
		started  time.Duration // how long ago the pass began
		lastLine time.Duration // how long ago the last line was printed
		sweep    int           // rows of a row-CD sweep done; 0 for a tile pass
		entries  float64       // of a pass over P; 0 for n², a dense P
		want     string        // "" for no line
	}{
		{name: "long pass", started: 10 * time.Second, lastLine: time.Hour, want: "P·S pass  50.0% of 10 tiles  10.0s  5e+04 entries/s  about 10s to go"},
		{name: "quiet", quiet: true, started: 10 * time.Second, lastLine: time.Hour},
		{name: "short pass", started: time.Second, lastLine: time.Hour},
		{name: "recent line", started: 10 * time.Second, lastLine: time.Second},
		// 500 of 1000 rows: their strips hold 375,250 of the 500,500
		// entries of the upper triangle.
		{name: "long sweep", started: 10 * time.Second, lastLine: time.Hour, sweep: 500, want: "sweep  75.0% (500 of 1000 rows)  10.0s  7.5e+04 entries/s  about 3s to go"},
		{name: "short sweep", started: time.Second, lastLine: time.Hour, sweep: 500},
		// On a graph of 30,000 entries, 500 of 1000 rows are half the sweep.
		{name: "long sweep of a graph", started: 10 * time.Second, lastLine: time.Hour, sweep: 500, entries: 30000,
			want: "sweep  50.0% (500 of 1000 rows)  10.0s  1.5e+03 entries/s  about 10s to go"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			now := time.Now()
			entries := tc.entries
			if entries == 0 {
				entries = 1000 * 1000
			}
			p := &progress{quiet: tc.quiet, out: &out, n: 1000, entries: entries,
				passStart: now.Add(-tc.started), lastLine: now.Add(-tc.lastLine)}
			if tc.sweep > 0 {
				p.sweep(tc.sweep)
			} else {
				p.pass("P·S", 5, 10)
			}
			got := strings.TrimSpace(out.String())
			if got != tc.want {
				t.Errorf("printed %q, want %q", got, tc.want)
			}
		})
	}
}

// TestProgressBefore checks that the hook before the first progress line
// (the memory budget's) is called once, before that line.
func TestProgressBefore(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{out: &buf, before: func() { buf.WriteString("budget\n") }}
	p.iteration(fw.Iteration{Iter: 0})
	p.iteration(fw.Iteration{Iter: 3, Final: true})
	if got := buf.String(); !strings.HasPrefix(got, "budget\niter ") || strings.Count(got, "budget") != 1 || strings.Count(got, "\n") != 3 {
		t.Errorf("progress printed %q; want the hook's line once, first, then two iteration lines", got)
	}
	quiet := &progress{out: &buf, quiet: true, before: func() { t.Error("the hook of a quiet run was called") }}
	quiet.iteration(fw.Iteration{Iter: 0})
}
