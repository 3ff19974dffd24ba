// Package ordered runs independent tasks on several goroutines and commits
// their results one at a time in task order.
//
// Floating-point addition is not associative, so a parallel reduction whose
// partial results are added in completion order gives different bits from run
// to run. Run separates the two phases: work, which may run in any order on
// any goroutine, fills a private buffer; commit, which runs on one goroutine in
// the order 0, 1, 2, ..., folds the buffer into the shared result. The result
// therefore has the same bits for every number of workers, and memory stays
// bounded: at most 2*workers buffers exist at a time.
package ordered

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/ssnmf/ssnmf/internal/fault"
)

// Run calls work(ctx, t, buf) for every task t in [0, n) on up to workers
// goroutines, and commit(t, buf) for each task in increasing order of t on a
// single goroutine, after work for that task has returned. Buffers come from
// newBuf and are reused: work must reset whatever it accumulates into.
// The first error from work or commit cancels the rest and is returned; a
// fault of a mapped file in work or commit on the goroutines Run starts is
// such an error (fault.Guard), and on the caller's goroutine (one worker)
// is the caller's to catch.
func Run[B any](ctx context.Context, workers, n int, newBuf func() B,
	work func(ctx context.Context, t int, buf B) error,
	commit func(t int, buf B) error) error {
	if n <= 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if workers < 1 {
		workers = 1
	}
	if workers == 1 || n == 1 {
		buf := newBuf()
		for t := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := work(ctx, t, buf); err != nil {
				return err
			}
			if err := commit(t, buf); err != nil {
				return err
			}
		}
		return nil
	}
	workers = min(workers, n)
	nbuf := 2 * workers
	type done struct {
		t   int
		buf B
	}
	free := make(chan B, nbuf)
	for range nbuf {
		free <- newBuf()
	}
	tickets := make(chan done)
	finished := make(chan done, nbuf)
	g, gctx := errgroup.WithContext(ctx)

	// The dispatcher hands out tasks in order, each with a free buffer, so the
	// lowest unfinished task always holds a buffer and the committer can never
	// wait on a task that waits on it.
	g.Go(func() error {
		defer close(tickets)
		for t := range n {
			var b B
			select {
			case b = <-free:
			case <-gctx.Done():
				return gctx.Err()
			}
			select {
			case tickets <- done{t, b}:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	for range workers {
		g.Go(fault.Guard(func() error {
			for d := range tickets {
				if err := work(gctx, d.t, d.buf); err != nil {
					return err
				}
				select {
				case finished <- d:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		}))
	}
	g.Go(fault.Guard(func() error {
		pending := make(map[int]B, nbuf)
		for next := 0; next < n; {
			select {
			case d := <-finished:
				pending[d.t] = d.buf
			case <-gctx.Done():
				return gctx.Err()
			}
			for {
				b, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				if err := commit(next, b); err != nil {
					return err
				}
				free <- b
				next++
			}
		}
		return nil
	}))
	return g.Wait()
}
