// Package ordered runs independent tasks on several goroutines and commits
// their results one at a time in task order.
//
// Floating-point addition is not associative, so a parallel reduction whose
// partial results are added in completion order gives different bits from run
// to run. Run separates the two phases: work, which may run in any order on
// any goroutine, fills a private buffer; commit, which runs one task at a time
// in the order 0, 1, 2, ..., folds the buffer into the shared result. The result
// therefore has the same bits for every number of workers, and memory stays
// bounded: at most 2*workers buffers exist at a time. Each runs tasks that
// need no commit, each writing its own part of a result.
package ordered

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/ssnmf/ssnmf/internal/fault"
)

// Run calls work(ctx, t, buf) for every task t in [0, n) on up to workers
// goroutines, and commit(t, buf) for each task in increasing order of t, one
// at a time (each commit returns before the next starts), after work for that
// task has returned. Buffers come from
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
	s := &scheduler[B]{n: n, free: make([]B, 0, 2*workers), pending: make(map[int]B, 2*workers)}
	s.wake = sync.NewCond(&s.mu)
	for range 2 * workers {
		s.free = append(s.free, newBuf())
	}
	g, gctx := errgroup.WithContext(ctx)
	stop := context.AfterFunc(gctx, s.cancel)
	defer stop()
	for range workers {
		g.Go(fault.Guard(func() error { return s.loop(gctx, work, commit) }))
	}
	return g.Wait()
}

// scheduler is the shared state of a parallel Run. Every worker takes the
// next task with a free buffer, and whichever worker finishes the lowest
// uncommitted task commits it and every finished task after it, in order:
// no goroutine but the workers runs, so no task waits for a hand-over
// between threads (which costs tens of microseconds where a thread must be
// woken, as much as a small task's work). The lowest unfinished task always
// holds a buffer, so a worker waiting for one always waits on a worker that
// is running.
type scheduler[B any] struct {
	mu         sync.Mutex
	wake       *sync.Cond // a buffer freed, or the run over
	n          int
	next       int       // the next task to hand out
	committed  int       // the next task to commit
	committing bool      // a worker is committing
	free       []B       // the buffers no task holds
	pending    map[int]B // finished tasks not yet committed
	done       bool      // an error or cancellation ends the run
}

// loop runs tasks until none is left or the run ends.
func (s *scheduler[B]) loop(ctx context.Context, work func(context.Context, int, B) error, commit func(int, B) error) error {
	for {
		t, buf, ok := s.take()
		if !ok {
			return ctx.Err()
		}
		if err := work(ctx, t, buf); err != nil {
			s.cancel()
			return err
		}
		if err := s.finish(t, buf, commit); err != nil {
			s.cancel()
			return err
		}
	}
}

// take returns the next task and a buffer for it, waiting for a buffer if
// none is free, or false when every task is handed out or the run ended.
func (s *scheduler[B]) take() (int, B, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.done && s.next < s.n && len(s.free) == 0 {
		s.wake.Wait()
	}
	var buf B
	if s.done || s.next == s.n {
		return 0, buf, false
	}
	t := s.next
	s.next++
	buf = s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	return t, buf, true
}

// finish records task t as finished and, unless another worker is
// committing, commits the finished tasks from the lowest uncommitted one
// on, outside the lock, freeing their buffers.
func (s *scheduler[B]) finish(t int, buf B, commit func(int, B) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[t] = buf
	if s.committing {
		return nil
	}
	s.committing = true
	defer func() { s.committing = false }()
	for !s.done {
		b, ok := s.pending[s.committed]
		if !ok {
			return nil
		}
		delete(s.pending, s.committed)
		if err := s.unlocked(func() error { return commit(s.committed, b) }); err != nil {
			return err
		}
		s.committed++
		s.free = append(s.free, b)
		s.wake.Broadcast() // every waiter: one may find the last task gone and must leave
	}
	return nil
}

// unlocked calls f with s.mu released, and holds it again when f returns
// or panics (a mapped file's fault, which fault.Guard turns into the
// worker's error).
func (s *scheduler[B]) unlocked(f func() error) error {
	s.mu.Unlock()
	defer s.mu.Lock()
	return f()
}

// cancel ends the run: the workers stop taking tasks and committing.
func (s *scheduler[B]) cancel() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
	s.wake.Broadcast()
}
