package solver

import (
	"context"
	"time"

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
