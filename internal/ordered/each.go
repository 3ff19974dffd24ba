package ordered

import (
	"context"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/ssnmf/ssnmf/internal/fault"
)

// Each runs f(t) for t in [0, tasks) on workers goroutines, for tasks
// whose results need no commit (each writes its own part of a result).
// Its error is the context's, or a fault of a mapped file (fault.Guard).
// The tasks start in order: each goroutine takes the next one as it
// finishes its last, rather than a goroutine being started for each task
// (thousands of tiles a search, each a hand-over between threads).
func Each(ctx context.Context, workers, tasks int, f func(t int)) error {
	g, ctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range min(max(1, workers), tasks) {
		g.Go(fault.Guard(func() error {
			for t := int(next.Add(1) - 1); t < tasks; t = int(next.Add(1) - 1) {
				if err := ctx.Err(); err != nil {
					return err
				}
				f(t)
			}
			return nil
		}))
	}
	return g.Wait()
}
