package kernelbench_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ssnmf/ssnmf/internal/kernelbench"
	"github.com/ssnmf/ssnmf/tile"
)

// Run times the passes on 200 points in 4 dimensions with k = 10, every
// family this CPU runs, one repetition each; WriteTable would print the
// table of "ssnmf bench".
func ExampleRun() {
	r, err := kernelbench.Run(context.Background(), kernelbench.Settings{
		N: 200, Ps: []int{4}, Ks: []int{10}, Reps: 1, FallbackReps: 1,
		Workers: 2, BlockSize: 64, Precision: tile.Float32, Probe: 10 * time.Millisecond,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	for _, row := range r.Rows {
		fmt.Printf("p=%d k=%d %s: go %t\n", row.P, row.K, row.Pass, row.Rate[tile.ISAGo] > 0)
	}
	// Output:
	// p=4 k=0 gen: go true
	// p=4 k=10 P·S: go true
	// p=4 k=10 P·W: go true
	// p=4 k=0 kNN: go true
	// p=4 k=0 screen: go true
}
