package affinity

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store/input"
)

// A kNN graph written by WriteEdges, in every format, reads back through
// Build to the same P; its rows are in the input's order (InputOrder).
func TestWriteEdges(t *testing.T) {
	dir := t.TempDir()
	spec := Spec{Standardize: true, BlockSize: 5, Workers: 2, Name: "small.csv", Graph: &graph.KNNOptions{Neighbors: 4, Weights: graph.SelfTuning}}
	b, err := Build(context.Background(), readSmall(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	want := denseP(t, b)
	for _, format := range []string{input.CSV, input.Arrow, input.Parquet} {
		path := filepath.Join(dir, "edges."+format)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := b.InputOrder(context.Background(), filepath.Join(dir, "renumbered.csr"))
		if err != nil || g != b.Graph() {
			t.Fatalf("InputOrder of rows in the input's order = %v, %v; want b's graph", g, err)
		}
		if err := WriteEdges(f, g, format); err != nil {
			t.Fatal(err)
		}
		f.Close()
		e, err := Build(context.Background(), nil, Spec{File: path, MapDir: dir, GraphFile: filepath.Join(dir, format+".csr"), Workers: 1, Name: path})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if got := denseP(t, e); !slices.Equal(got, want) {
			t.Errorf("%s: P read back differs from P written", format)
		}
		e.Close()
	}
}
