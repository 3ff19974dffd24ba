package model_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/model"
	"github.com/ssnmf/ssnmf/tile"
)

// Example saves the model of two clusters of four rows each, whose
// memberships a solve would have given, opens it as ssnmf predict does,
// and assigns two new rows.
func Example() {
	x := []float64{0, 0, 0, 1, 1, 0, 1, 1, 9, 9, 9, 10, 10, 9, 10, 10}
	n, p, k := 8, 2, 2
	mean, std := tile.Moments(x, n, p)
	tile.Standardize(x, n, p)
	g, err := graph.KNN(context.Background(), x, n, p, graph.KNNOptions{Neighbors: 4, Weights: graph.SelfTuning})
	if err != nil {
		log.Fatal(err)
	}
	w := make([]float64, n*k)
	for i := range n {
		w[i*k+i/4] = 1 // rows 0-3 in cluster 0, rows 4-7 in cluster 1
	}
	meta, arrays, err := model.Build(context.Background(), model.Training{X: x, N: n, P: p, W: w, K: k,
		Names: []string{"a", "b"}, Mean: mean, Std: std, Graph: g, Neighbors: 4, Weights: graph.SelfTuning, Scale: 2})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "model-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := model.Save(filepath.Join(dir, "m"), meta, arrays); err != nil {
		log.Fatal(err)
	}

	m, err := model.Open(filepath.Join(dir, "m"))
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	rows := []float64{0.5, 0.2, 9.5, 9.8} // two new rows, raw features a, b
	out := make([]float64, 2*m.K())
	if err := m.Predict(context.Background(), rows, 2, out, model.Options{}); err != nil {
		log.Fatal(err)
	}
	for r := range 2 {
		fmt.Printf("row %d: memberships %.3f\n", r, out[r*k:(r+1)*k])
	}
	// Output:
	// row 0: memberships [1.000 0.000]
	// row 1: memberships [0.000 1.000]
}
