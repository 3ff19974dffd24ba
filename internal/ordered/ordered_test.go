package ordered

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
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
			if commits > 1000 || (tc.failWork >= 0 && commits > tc.failWork) {
				t.Errorf("%d commits after a failure at task %d", commits, tc.failWork)
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
