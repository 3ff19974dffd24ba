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
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			now := time.Now()
			p := &progress{quiet: tc.quiet, out: &out, n: 1000,
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

// TestPassTimerCountsSweeps checks that passes taken outside Mul and
// MulOneHot (row-CD sweeps) are counted from the iteration records, once,
// across refreshes, the final record, a second start and none for methods
// whose passes all go through the timer.
func TestPassTimerCountsSweeps(t *testing.T) {
	var p passTimer
	mul := func() { p.passes++; p.elapsed += time.Second }
	rec := p.record
	// rowcd: the first pass, a sweep, a refresh, a sweep, the final pass.
	mul()
	rec(fw.Iteration{Passes: 2, PassTime: 3 * time.Second})
	mul()
	rec(fw.Iteration{Passes: 4, PassTime: 3 * time.Second})
	mul()
	rec(fw.Iteration{Passes: 5, Final: true})
	if p.passes != 5 || p.elapsed != 9*time.Second {
		t.Fatalf("rowcd: %d passes in %v, want 5 in 9s", p.passes, p.elapsed)
	}
	// A second start: its first pass and one sweep.
	mul()
	rec(fw.Iteration{Passes: 2, PassTime: 3 * time.Second})
	if p.passes != 7 || p.elapsed != 13*time.Second {
		t.Fatalf("second start: %d passes in %v, want 7 in 13s", p.passes, p.elapsed)
	}
	// fw: every pass goes through the timer.
	var q passTimer
	q.passes = 1
	for i := range 3 {
		q.passes++
		q.record(fw.Iteration{Passes: 2 + i, PassTime: time.Second})
	}
	if q.passes != 4 || q.elapsed != 0 {
		t.Fatalf("fw: %d passes in %v, want the 4 the timer counted", q.passes, q.elapsed)
	}
}
