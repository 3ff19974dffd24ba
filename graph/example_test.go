package graph_test

import (
	"context"
	"fmt"
	"slices"
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
	g, err := graph.FromEdges(context.Background(), "edges.csv", tab, graph.EdgeOptions{Rows: 4})
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

// ExamplePartition builds a graph by the approximate search: the rows are
// moved into the leaves of the partition tree, searched, and the graph is
// renumbered back into the input's order. Two clusters of 400 points on a
// line, every row's 5 nearest.
func ExamplePartition() {
	const n = 800
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i%400) + 1000*float64(i/400) // rows 0..399 and 400..799 apart
	}
	order, err := graph.Partition(context.Background(), x, n, 1, 100, 1, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	var st graph.KNNStats
	g, err := graph.KNN(context.Background(), x, n, 1, graph.KNNOptions{Neighbors: 5, Method: graph.Approximate,
		Leaf: 100, Probes: 2, Workers: 2, Stats: &st})
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err = g.Renumber(context.Background(), order, "", 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d leaves, recall %.2f on %d rows, %d rounds\n", st.Leaves, st.Recall, st.RecallRows, len(st.Rounds))
	fmt.Println("row 0:", g.Col[g.RowPtr[0]:g.RowPtr[1]])
	fmt.Println("row 500:", g.Col[g.RowPtr[500]:g.RowPtr[501]])
	// Output:
	// 8 leaves, recall 1.00 on 800 rows, 1 rounds
	// row 0: [0 1 2 3 4]
	// row 500: [498 499 500 501 502]
}

// ExampleLeafRoundRows runs the approximate search's rounds of leaf pairs
// in two parts, as two tasks of a job step would (package cluster does it
// with files), and gets the graph of the search run in one piece.
func ExampleLeafRoundRows() {
	const n, leaf = 600, 50
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i*i%997) / 997
	}
	if _, err := graph.Partition(context.Background(), x, n, 1, leaf, 1, 1); err != nil {
		fmt.Println(err)
		return
	}
	opt := graph.KNNOptions{Method: graph.Approximate, Neighbors: 5, Leaf: leaf, Probes: 2}
	want, err := graph.KNN(context.Background(), x, n, 1, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	rounds := 0
	opt.LeafRound = func(ctx context.Context, x []float64, n, p int, o graph.KNNOptions, r *graph.LeafRound) ([]*graph.KNNPart, error) {
		rounds++
		parts := make([]*graph.KNNPart, 2)
		for t := range parts {
			var err error
			if parts[t], err = graph.LeafRoundRows(ctx, x, n, p, o, r, t, len(parts)); err != nil {
				return nil, err
			}
		}
		return parts, nil
	}
	g, err := graph.KNN(context.Background(), x, n, 1, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	same := slices.Equal(g.RowPtr, want.RowPtr) && slices.Equal(g.Col, want.Col) && slices.Equal(g.Val, want.Val)
	fmt.Println("rounds in parts:", rounds > 0, "same graph:", same)
	// Output:
	// rounds in parts: true same graph: true
}
