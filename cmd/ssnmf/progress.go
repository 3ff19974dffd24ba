package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/solver"
)

// Progress lines: at most one per progressEvery for iterations, and one per
// passProgressEvery within a long tile pass.
const (
	progressEvery     = time.Second
	passProgressEvery = 5 * time.Second
)

// progress prints the progress lines of a run: one per iteration at most
// once a second, and within a long tile pass or row-CD sweep how far it
// has come.
type progress struct {
	out       io.Writer
	quiet     bool      // print nothing
	n         int       // P is n×n
	entries   float64   // entries of a pass over P: n², or the stored entries of a graph
	lastLine  time.Time // when the last progress line was printed
	passStart time.Time // when the current tile pass began
	// before, if not nil, is called once, before the first line: the
	// run's memory budget line comes first.
	before func()
}

// announce calls p.before once.
func (p *progress) announce() {
	if p.before != nil {
		p.before()
		p.before = nil
	}
}

// iteration prints the progress line of an iteration, at most once a
// second, and always for the first and the last iteration.
func (p *progress) iteration(it fw.Iteration) {
	if p.quiet {
		return
	}
	p.announce()
	switch {
	case it.Final:
		fmt.Fprintf(p.out, "iter %6d  f %.10g  gap %.4g  stop  %.1fs\n", it.Iter, it.Objective, it.Gap, it.Elapsed.Seconds())
	case it.Iter == 0 || time.Since(p.lastLine) >= progressEvery:
		p.lastLine = time.Now()
		fmt.Fprintf(p.out, "iter %6d  f %.10g  gap %.4g  step %.4g  pass %.3fs  %.3g entries/s  %.1fs\n",
			it.Iter, it.Objective, it.Gap, it.Step, it.PassTime.Seconds(), solver.EntriesPerSecond(p.entries, it.PassTime), it.Elapsed.Seconds())
	}
}

// edgeListPass is the pass of graph.FromEdges's progress.
const edgeListPass = "edge list"

// pass is the tile engine's Progress hook: within a pass that runs for
// long, it prints how far the pass has come every few seconds.
func (p *progress) pass(pass string, done, total int) {
	if done == 1 {
		p.passStart = time.Now()
	}
	unit := "tiles"
	switch {
	case pass == edgeListPass:
		unit = fmt.Sprintf("batches of %d edges, two passes", graph.EdgeBatchRows)
	case strings.HasSuffix(pass, graph.DescentPass):
		unit = fmt.Sprintf("blocks of %d rows", graph.DescentBlock)
	}
	p.line(fmt.Sprintf("%s pass", pass), fmt.Sprintf("of %d %s", total, unit), float64(done)/float64(total))
}

// sweep is the row-CD sweep's Progress hook, the pass of a sweep: rows is
// the number of rows visited so far in the sweep, and the share of the
// sweep done is, for a dense P, the share of the upper triangle of P that
// their strips cover, and for a graph, whose rows cost about alike, the
// share of the rows.
func (p *progress) sweep(rows int) {
	if rows == 0 {
		p.passStart = time.Now()
		return
	}
	n, m := float64(p.n), float64(rows)
	frac := m / n
	if p.entries >= n*n {
		frac = (m*n - m*(m-1)/2) / (n * (n + 1) / 2)
	}
	p.line("sweep", fmt.Sprintf("(%d of %d rows)", rows, p.n), frac)
}

// line prints, at most every few seconds and not in the first few seconds
// of a pass, the share frac of the pass done, the rate in kernel entries
// per second (all n² entries of a pass counted) and the time to go.
func (p *progress) line(what, count string, frac float64) {
	now := time.Now()
	if p.quiet || now.Sub(p.lastLine) < passProgressEvery || now.Sub(p.passStart) < passProgressEvery || frac <= 0 {
		return
	}
	p.lastLine = now
	p.announce()
	secs := now.Sub(p.passStart).Seconds()
	rate := "" // unknown while P is being built (the kNN pass)
	if p.entries > 0 {
		rate = fmt.Sprintf("  %.3g entries/s", frac*p.entries/secs)
	}
	fmt.Fprintf(p.out, "  %s %5.1f%% %s  %.1fs%s  about %.0fs to go\n", what, 100*frac, count, secs, rate, secs/frac-secs)
}
