package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/ssnmf/ssnmf/cluster"
	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/tile"
)

// inProcess runs a step's tasks one after the other in this process,
// where srun would start them on the allocation's nodes.
type inProcess struct{}

func (inProcess) Launch(ctx context.Context, s cluster.Step) error {
	d, err := cluster.Open(s.Dir)
	if err != nil {
		return err
	}
	var errs []error
	for task := range s.Tasks {
		errs = append(errs, cluster.Work(ctx, vfs.OS{}, d, s.Pass, task, s.Tasks, 1))
	}
	return errors.Join(errs...)
}

// A coordinator runs a pass of the Gaussian kernel of four points, in two
// pairs, as a step of two tasks; each task computes the rows of its part.
func ExampleCoordinator() {
	dir, err := os.MkdirTemp("", "ssnmf-run-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	x := []float64{0, 0, 0.1, 0, 5, 5, 5.1, 5} // 4 rows of 2 features
	c := &cluster.Coordinator{Path: dir, Tasks: 2, Launcher: inProcess{}, Retries: 1}
	p, err := c.Gaussian(x, 4, 2, 1, tile.Float64, 2)
	if err != nil {
		log.Fatal(err)
	}
	w := []float64{1, 0, 1, 0, 0, 1, 0, 1} // the two pairs
	pw := make([]float64, len(w))
	if _, err := p.Mul(context.Background(), pw, w, 2, nil); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("P·W = %.4f\n", pw)
	fmt.Printf("%d step, %d retries\n", c.Stats.Steps, c.Stats.Retries)
	// Output:
	// P·W = [1.9900 0.0000 1.9900 0.0000 0.0000 1.9900 0.0000 1.9900]
	// 1 step, 0 retries
}
