package ordered

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSumBitsIndependentOfWorkers checks the package's promise: a float sum
// reduced through Run has the same bits for any number of workers.
func TestSumBitsIndependentOfWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 10000)
	for i := range xs {
		xs[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
	}
	const chunk = 37
	ntask := (len(xs) + chunk - 1) / chunk
	sum := func(workers int) (float64, []int) {
		var total float64
		var order []int
		err := Run(context.Background(), workers, ntask,
			func() *float64 { return new(float64) },
			func(_ context.Context, task int, b *float64) error {
				*b = 0
				for _, x := range xs[task*chunk : min(len(xs), (task+1)*chunk)] {
					*b += x
				}
				return nil
			},
			func(task int, b *float64) error {
				order = append(order, task)
				total += *b
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		return total, order
	}
	want, _ := sum(1)
	for _, w := range []int{1, 2, 3, 4, 8, 64} {
		got, order := sum(w)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("workers=%d: sum %v, want %v bit for bit", w, got, want)
		}
		for i, task := range order {
			if task != i {
				t.Fatalf("workers=%d: commit %d was task %d", w, i, task)
			}
		}
		if len(order) != ntask {
			t.Fatalf("workers=%d: %d commits, want %d", w, len(order), ntask)
		}
	}
}

func TestErrorsStopRun(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name      string
		workers   int
		failWork  int
		failCommt int
	}{
		{name: "work/serial", workers: 1, failWork: 5, failCommt: -1},
		{name: "work/parallel", workers: 4, failWork: 5, failCommt: -1},
		{name: "commit/serial", workers: 1, failWork: -1, failCommt: 7},
		{name: "commit/parallel", workers: 4, failWork: -1, failCommt: 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			commits := 0
			err := Run(context.Background(), tc.workers, 1000,
				func() struct{} { return struct{}{} },
				func(_ context.Context, task int, _ struct{}) error {
					if task == tc.failWork {
						return boom
					}
					return nil
				},
				func(task int, _ struct{}) error {
					commits++
					if task == tc.failCommt {
						return boom
					}
					return nil
				})
			if !errors.Is(err, boom) {
				t.Fatalf("err = %v, want boom", err)
			}
			if tc.failWork >= 0 && commits > tc.failWork {
				t.Errorf("%d commits, though task %d failed", commits, tc.failWork)
			}
			if tc.failCommt >= 0 && commits != tc.failCommt+1 {
				t.Errorf("%d commits, want %d: commits stop at the failing one", commits, tc.failCommt+1)
			}
		})
	}
}

func TestCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, w := range []int{1, 3} {
		err := Run(ctx, w, 10, func() int { return 0 },
			func(context.Context, int, int) error { return nil },
			func(int, int) error { return nil })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("workers=%d: err = %v, want context.Canceled", w, err)
		}
	}
}

// TestCancelDuringRun cancels while tasks are in flight and checks that Run
// returns the context's error promptly and leaves no goroutine behind.
func TestCancelDuringRun(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, workers := range []int{1, 2, 3, 7} {
		for trial := range 20 {
			ctx, cancel := context.WithCancel(context.Background())
			var started atomic.Int64
			cancelAt := int64(trial % 9)
			done := make(chan error, 1)
			go func() {
				done <- Run(ctx, workers, 1000, func() int { return 0 },
					func(ctx context.Context, task int, _ int) error {
						if started.Add(1) == cancelAt+1 {
							cancel()
						}
						time.Sleep(time.Duration(task%3) * 50 * time.Microsecond)
						return nil
					},
					func(int, int) error { return nil })
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("workers=%d trial %d: err = %v, want context.Canceled", workers, trial, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("workers=%d trial %d: Run did not return after cancellation", workers, trial)
			}
			cancel()
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after the runs, %d before", n, before)
	}
}

// TestBuffersBounded checks that Run makes at most 2·workers buffers and
// never hands one buffer to two tasks in flight at once.
func TestBuffersBounded(t *testing.T) {
	for _, workers := range []int{2, 3, 8} {
		made := 0
		var inUse sync.Map
		err := Run(context.Background(), workers, 500,
			func() *int { made++; return new(int) },
			func(_ context.Context, task int, b *int) error {
				if _, busy := inUse.LoadOrStore(b, task); busy {
					return fmt.Errorf("task %d got a buffer in use", task)
				}
				time.Sleep(time.Duration(task%4) * 20 * time.Microsecond)
				*b = task
				return nil
			},
			func(task int, b *int) error {
				if *b != task {
					return fmt.Errorf("commit %d got task %d's buffer", task, *b)
				}
				inUse.Delete(b)
				return nil
			})
		if err != nil {
			t.Fatalf("workers=%d: %v", workers, err)
		}
		if made > 2*workers {
			t.Errorf("workers=%d: %d buffers made, want at most %d", workers, made, 2*workers)
		}
	}
}

// BenchmarkRun runs tasks of about 40 µs of arithmetic each, a tile's
// work in the tile passes, and reports the tasks a second: with two
// workers, twice the rate of one where hand-overs cost nothing.
func BenchmarkRun(b *testing.B) {
	const tasks = 2000
	work := func(_ context.Context, t int, buf *float64) error {
		x := float64(t)
		for range 20000 {
			x = x*0.999999 + 1e-6
		}
		*buf = x
		return nil
	}
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var sink float64
			for b.Loop() {
				err := Run(context.Background(), workers, tasks, func() *float64 { return new(float64) }, work,
					func(_ int, buf *float64) error { sink += *buf; return nil })
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tasks*b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}
