package solver

import (
	"context"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/kmeans"
	"github.com/ssnmf/ssnmf/methods"
)

// DefaultStartsMax and StartsFullRows define DefaultStarts.
const (
	DefaultStartsMax = 2
	StartsFullRows   = 20000
)

// KMeansStarts is the number of k-means starts of a method that makes its
// own W from a clustering (kmeans) when the starts are not given.
const KMeansStarts = 10

// StartsFor is the number of starts when not given: for a sparse P
// (sparse) of n rows, DefaultStarts(n); for a method that makes its own W
// (kmeans, spectral), KMeansStarts; else (the dense kernel and tile files,
// whose passes cost n² each and which the study did not cover) 1.
func StartsFor(info methods.Method, sparse bool, n int) int {
	switch {
	case info.OwnStart:
		return KMeansStarts
	case sparse:
		return DefaultStarts(n)
	}
	return 1
}

// DefaultStarts is the starts of a sparse P of n rows: DefaultStartsMax up
// to StartsFullRows rows, then fewer in proportion to n, so that the starts
// together cost about as much as DefaultStartsMax starts of StartsFullRows
// rows; at least 1. docs/quality.md gives the study.
func DefaultStarts(n int) int {
	if n <= StartsFullRows {
		return DefaultStartsMax
	}
	return max(1, DefaultStartsMax*StartsFullRows/n)
}

// The k-means start: one k-means++ start on all rows, unless SampleStarts
// starts on a sample of InitSampleRows rows (or as many as fit in
// InitSampleBytes) cost no more, that is above SampleStarts times the
// sample's rows; then the best of those is refined by Lloyd passes over
// all rows (kmeans.Settings.Sample), so that the start of a large data
// set does not rest on the luck of one start.
const (
	InitSampleRows  = 1 << 16
	InitSampleBytes = 128 << 20
	SampleStarts    = 10
)

// KMeansStart returns the settings of the k-means start of n rows of p
// features in k clusters, seeded by seed: starts k-means++ starts (0: 1, or
// SampleStarts on a sample for a large n), with workers goroutines, on
// rows in the given order (nil: the input's).
func KMeansStart(n, p, k, starts, workers int, seed uint64, order []int32) kmeans.Settings {
	s := kmeans.Settings{Starts: starts, Seed: seed, Workers: workers, Order: order}
	if sample := max(50*k, min(InitSampleRows, InitSampleBytes/(8*max(p, 1)))); n > SampleStarts*sample {
		s.Sample = sample
		if s.Starts == 0 {
			s.Starts = SampleStarts
		}
	}
	s.Starts = max(s.Starts, 1)
	return s
}

// StopContext returns a context canceled when stop (polled ten times a
// second; nil never does) asks to stop: the work that takes no checkpoint,
// the set-up of a solve, the baselines and the commands other than solve,
// ends at once on the first signal instead of running to its end.
func StopContext(ctx context.Context, stop func() bool) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if stop == nil {
		return ctx, cancel
	}
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if stop() {
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}

// InputOrderVisits returns the order of the visits of rowcd on rows moved
// into the given order (see affinity.Built.Order): the input's order,
// Visit[t] the position of the input's row t; nil if order is.
func InputOrderVisits(order []int32) []int32 {
	if order == nil {
		return nil
	}
	visit := make([]int32, len(order))
	for q, i := range order {
		visit[i] = int32(q)
	}
	return visit
}

// Starts solves one P from several seeded starts and keeps the least
// objective, ties to the lower start: the loop of the command's run and of
// Solve. Start s is seeded kmeans.StartSeed(Seed, s).
type Starts struct {
	N     int    // the starts
	Seed  uint64 // the run's seed
	First int    // the first start to solve: 0, or a resumed run's
	// Best is the result of the best start that ended, nil if none (a
	// resumed run's); Run keeps it.
	Best *fw.Result
	// Start solves start s, seeded by seed, from its initial point.
	Start func(ctx context.Context, s int, seed uint64) (*fw.Result, error)
	// Ended records start s, seeded by seed, which ended in res.
	Ended func(s int, seed uint64, res *fw.Result)
	// KeepBest makes the W of start s, which ended in res, the best so
	// far (for example by Workspace.KeepBest), before Best is res.
	KeepBest func(s int, res *fw.Result) error
}

// Run solves the starts First to N-1 and returns the result of the best.
// With one start, its result is the answer and its W stays in place; with
// more, the caller takes the best W from where KeepBest put it. A start
// that fails or is stopped (fw.Stopped) ends the run with its result; one
// that reaches its time limit runs no further start, and the best result's
// status is then fw.TimeLimit.
func (st *Starts) Run(ctx context.Context) (*fw.Result, error) {
	var last *fw.Result
	for s := st.First; s < st.N; s++ {
		seed := kmeans.StartSeed(st.Seed, s)
		res, err := st.Start(ctx, s, seed)
		if err != nil || res.Status == fw.Stopped {
			return res, err
		}
		st.Ended(s, seed, res)
		if st.N == 1 {
			return res, nil
		}
		if st.Best == nil || res.Objective < st.Best.Objective {
			if err := st.KeepBest(s, res); err != nil {
				return nil, err
			}
			st.Best = res
		}
		if last = res; res.Status == fw.TimeLimit {
			break
		}
	}
	best := *st.Best
	if last != nil && last.Status == fw.TimeLimit {
		best.Status = fw.TimeLimit
	}
	return &best, nil
}
