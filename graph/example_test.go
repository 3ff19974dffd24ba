package graph_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
)

// ExampleKNN builds the 3-nearest-neighbour graph of six points on a line,
// two groups of three, and prints each row's neighbour list.
func ExampleKNN() {
	x := []float64{0, 1, 2, 10, 11, 12}
	g, err := graph.KNN(context.Background(), x, 6, 1, graph.KNNOptions{Neighbors: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	for i := range g.N() {
		fmt.Println(i, g.Col[g.RowPtr[i]:g.RowPtr[i+1]], g.Val[g.RowPtr[i]:g.RowPtr[i+1]])
	}
	// Output:
	// 0 [0 1 2] [1 1 1]
	// 1 [0 1 2] [1 1 1]
	// 2 [0 1 2] [1 1 1]
	// 3 [3 4 5] [1 1 1]
	// 4 [3 4 5] [1 1 1]
	// 5 [3 4 5] [1 1 1]
}

// ExampleFromEdges reads a graph from an edge list: each unordered pair
// once, a self-loop setting the diagonal.
func ExampleFromEdges() {
	tab, err := store.ParseCSV(strings.NewReader("src,dst,weight\n0,1,0.5\n2,1,2\n2,2,1\n"), "edges.csv", store.TableOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := graph.FromEdges("edges.csv", tab, 4, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range g.N() {
		fmt.Println(i, g.Col[g.RowPtr[i]:g.RowPtr[i+1]], g.Val[g.RowPtr[i]:g.RowPtr[i+1]])
	}
	// Output:
	// 0 [1] [0.5]
	// 1 [0 2] [0.5 2]
	// 2 [1 2] [2 1]
	// 3 [] []
}
