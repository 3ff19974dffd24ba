package solver_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/model"
	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/spectral"
)

// blobs returns 60 rows of two features in three groups of 20, around
// (0, 0), (10, 0) and (0, 10).
func blobs() [][]float64 {
	var rows [][]float64
	for g, c := range [][2]float64{{0, 0}, {10, 0}, {0, 10}} {
		for i := range 20 {
			dx, dy := float64(i%5)/4, float64((i*3+g)%7)/6
			rows = append(rows, []float64{c[0] + dx, c[1] + dy})
		}
	}
	return rows
}

// Clustering a slice of rows: the zero Options are ssnmf solve's defaults.
func ExampleSolve() {
	res, err := solver.Solve(context.Background(), solver.Input{Rows: blobs()}, solver.Options{K: 3})
	if err != nil {
		log.Fatal(err)
	}
	sizes := make([]int, res.K)
	for i := range res.N {
		sizes[res.Cluster(i)]++
	}
	fmt.Println("clusters of rows 0, 20, 40:", res.Cluster(0), res.Cluster(20), res.Cluster(40))
	fmt.Println("sizes:", sizes, "starts:", len(res.Starts), "stop:", res.Status)
	// Output:
	// clusters of rows 0, 20, 40: 0 2 1
	// sizes: [20 20 20] starts: 2 stop: gap
}

// Clustering an Arrow record: the columns are chosen by name, and the label
// column, never a feature, gives k.
func ExampleSolve_arrow() {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Float64},
		{Name: "y", Type: arrow.PrimitiveTypes.Float32},
		{Name: "label", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i, r := range blobs() {
		b.Field(0).(*array.Float64Builder).Append(r[0])
		b.Field(1).(*array.Float32Builder).Append(float32(r[1]))
		b.Field(2).(*array.StringBuilder).Append([]string{"a", "b", "c"}[i/20])
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	res, err := solver.Solve(context.Background(), solver.Input{Record: rec}, solver.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("k from the labels:", res.K, "clusters of rows 0, 20, 40:", res.Cluster(0), res.Cluster(20), res.Cluster(40))
	fmt.Printf("against the labels: ARI %.2f, accuracy %.2f\n", *res.Summary.ARI, *res.Summary.Accuracy)
	// Output:
	// k from the labels: 3 clusters of rows 0, 20, 40: 0 2 1
	// against the labels: ARI 1.00, accuracy 1.00
}

// Initial points of a spectral embedding, and the stop rules: the
// Options hold every setting of ssnmf solve's run.
func ExampleOptions_init() {
	opt := solver.Options{K: 3, Init: solver.InitSpectral, Starts: 1, Mtol: -1, Tol: 1e-9, MaxIter: 200}
	res, err := solver.Solve(context.Background(), solver.Input{Rows: blobs()}, opt)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("clusters of rows 0, 20, 40:", res.Cluster(0), res.Cluster(20), res.Cluster(40), "spectral eigenvalues:", len(res.Summary.Spectral.Eigenvalues))
	// Output:
	// clusters of rows 0, 20, 40: 0 2 1 spectral eigenvalues: 4
}

// Reading memberships: row i of W is the soft membership of row i in each
// cluster, summing to 1, and its largest is the row's cluster. A row far
// from every group, whose graph weights are all but 0, belongs to each alike.
func ExampleResult_Row() {
	rows := append(blobs(), []float64{5, 5}) // a row between the groups
	res, err := solver.Solve(context.Background(), solver.Input{Rows: rows}, solver.Options{K: 3})
	if err != nil {
		log.Fatal(err)
	}
	for _, i := range []int{0, 60} {
		fmt.Printf("row %d: memberships %.2f, cluster %d\n", i, res.Row(i), res.Cluster(i))
	}
	// Output:
	// row 0: memberships [1.00 0.00 0.00], cluster 0
	// row 60: memberships [0.33 0.33 0.33], cluster 0
}

// Saving a model, and assigning new rows with it.
func ExampleOptions_model() {
	dir, err := os.MkdirTemp("", "ssnmf-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	opt := solver.Options{K: 3, Model: filepath.Join(dir, "blobs.model")}
	if _, err := solver.Solve(context.Background(), solver.Input{Rows: blobs()}, opt); err != nil {
		log.Fatal(err)
	}
	m, err := model.Open(opt.Model)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	x := []float64{0.5, 0.5, 10.5, 0.5} // two new rows, near the first two groups
	w := make([]float64, 2*3)
	if err := m.Predict(context.Background(), x, 2, w, model.Options{}); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("new rows' memberships: %.2f %.2f\n", w[:3], w[3:])
	// Output:
	// new rows' memberships: [1.00 0.00 0.00] [0.00 0.00 1.00]
}

// starts is an Observer that prints the line of each start.
type starts struct{}

func (starts) Iteration(int, fw.Iteration)                              {}
func (starts) Sweep(int)                                                {}
func (starts) Resumed(int, *fw.State)                                   {}
func (starts) Checkpointed(int, time.Duration)                          {}
func (starts) SpectralProgress(int, int, float64, time.Duration)        {}
func (starts) SpectralDone(*spectral.Embedding, *solver.SpectralReport) {}
func (starts) StartBegun(s, n int, seed uint64)                         { fmt.Printf("start %d of %d\n", s+1, n) }

// The run of a P set up by hand: Solve's steps, with an Observer of the
// run's progress; a Run with CheckpointEvery and Stop saves checkpoints in
// the workspace's directory, and one with Saved (ReadSaved) resumes from
// them, as ssnmf solve -resume does.
func ExampleRun() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ssnmf-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	opt := solver.Options{K: 3, Workers: 2}
	tab, err := solver.Input{Rows: blobs()}.Table(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer tab.Close()
	spec, err := opt.Spec(dir, "blobs", 64<<20)
	if err != nil {
		log.Fatal(err)
	}
	pr, err := solver.NewProblem(ctx, tab, spec, false)
	if err != nil {
		log.Fatal(err)
	}
	defer pr.Close()
	r := &solver.Run{Options: opt, Problem: pr, Meter: &solver.Meter{Affinity: pr.Affinity}, Observer: starts{}}
	if err := r.Scale(ctx); err != nil {
		log.Fatal(err)
	}
	if r.Workspace, err = solver.NewWorkspace(dir, tab.N, opt.K, 64<<20); err != nil {
		log.Fatal(err)
	}
	defer r.Workspace.Close()
	res, err := r.Solve(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stop:", res.Status, "best start:", r.Best, "passes over P:", r.Meter.Passes > 0)
	// Output:
	// start 1 of 2
	// start 2 of 2
	// stop: gap best start: 0 passes over P: true
}
