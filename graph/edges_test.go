package graph

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/ssnmf/ssnmf/store"
)

// edgeTable parses an edge list given as CSV text.
func edgeTable(t *testing.T, text string) *store.Table {
	t.Helper()
	tab, err := store.ParseCSV(strings.NewReader(text), "e.csv", store.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestEdgesRoundTrip writes a kNN graph as CSV and as record batches and
// reads both back to the same bits.
func TestEdgesRoundTrip(t *testing.T) {
	const n, p = 120, 3
	g, err := KNN(context.Background(), points(n, p, 5), n, p, KNNOptions{Neighbors: 6, Weights: SelfTuning})
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string, h *CSR) {
		t.Helper()
		if !slices.Equal(h.RowPtr, g.RowPtr) || !slices.Equal(h.Col, g.Col) || !slices.Equal(h.Val, g.Val) {
			t.Errorf("%s: the graph read back differs", what)
		}
	}
	var buf bytes.Buffer
	if err := g.WriteEdgesCSV(&buf); err != nil {
		t.Fatal(err)
	}
	h, err := FromEdges(context.Background(), "e.csv", edgeTable(t, buf.String()), EdgeOptions{Rows: n})
	if err != nil {
		t.Fatal(err)
	}
	same("CSV", h)
	// Record batches: rebuild the table from their columns.
	var rows []float64
	if err := g.EdgeBatches(func(rec arrow.RecordBatch) error {
		src, dst := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64)
		w := rec.Column(2).(*array.Float64)
		for r := range int(rec.NumRows()) {
			rows = append(rows, float64(src.Value(r)), float64(dst.Value(r)), w.Value(r))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h, err = FromEdges(context.Background(), "e.arrow", &store.Table{Features: rows, N: len(rows) / 3, P: 3, Names: []string{ColSrc, ColDst, ColWeight}}, EdgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	same("record batches", h)
}

func TestFromEdges(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		n    int
		want []float64 // dense P, or nil for an error
		err  string
	}{
		{name: "weights, both directions, self-loop", text: "src,dst,weight\n0,1,2\n2,1,0.5\n2,2,3\n", n: 3,
			want: []float64{0, 2, 0, 2, 0, 0.5, 0, 0.5, 3}},
		{name: "no weight column: 1; n from the ids", text: "dst,src\n1,0\n", want: []float64{0, 1, 1, 0}},
		{name: "an isolated row", text: "src,dst\n0,1\n", n: 3, want: []float64{0, 1, 0, 1, 0, 0, 0, 0, 0}},
		{name: "id out of range", text: "src,dst\n0,1\n0,3\n", n: 3, err: "e.csv: edge 2: column dst: 3, want a row id in [0, 3)"},
		{name: "negative id", text: "src,dst\n-1,1\n", err: "edge 1: column src: -1, want a whole number >= 0"},
		{name: "fractional id", text: "src,dst\n0.5,1\n", err: "edge 1: column src: 0.5"},
		{name: "negative weight", text: "src,dst,weight\n0,1,-2\n", err: "edge 1: column weight: -2, want a finite weight >= 0"},
		{name: "duplicate edge", text: "src,dst\n0,1\n1,2\n0,1\n", err: "edges 1 and 3: the pair (0, 1) is listed twice"},
		{name: "both directions", text: "src,dst,weight\n0,1,1\n1,0,2\n", err: "edges 1 and 2: the pair (0, 1) is listed twice"},
		{name: "self-loop twice", text: "src,dst\n1,1\n1,1\n", err: "the pair (1, 1) is listed twice"},
		{name: "other column", text: "src,dst,w\n0,1,1\n", err: `column "w" of an edge list`},
		{name: "no dst", text: "src,weight\n0,1\n", err: "needs the columns src and dst"},
		{name: "label column", text: "src,dst,label\n0,1,a\n", err: "no label column"},
		{name: "largest id far above the edges", text: "src,dst,weight\n0,1,1\n1,2000000000,1\n",
			err: "e.csv: the largest id 2000000000 makes 2000000001 rows, but 2 edges name at most 4 distinct rows: give the number of rows (-rows 2000000001"},
		{name: "largest id within MaxImpliedRows", text: "src,dst\n0,65535\n", want: nil, err: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := FromEdges(context.Background(), "e.csv", edgeTable(t, tc.text), EdgeOptions{Rows: tc.n})
			if tc.want == nil && tc.err == "" { // only that it builds
				if err != nil || g.N() != 65536 {
					t.Fatalf("error %v, want a graph of 65536 rows", err)
				}
				return
			}
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := dense(g); !slices.Equal(got, tc.want) {
				t.Errorf("P = %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := FromEdges(context.Background(), "e.csv", &store.Table{Names: []string{ColSrc, ColDst}, P: 2}, EdgeOptions{}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("no edges: error %v", err)
	}
}

// FuzzFromEdges checks that any edge list gives a valid symmetric graph or
// an error, never a panic.
func FuzzFromEdges(f *testing.F) {
	f.Add("src,dst,weight\n0,1,2\n2,1,0.5\n2,2,3\n", 0)
	f.Add("src,dst\n0,1\n0,1\n", 3)
	f.Fuzz(func(t *testing.T, text string, n int) {
		tab, err := store.ParseCSV(strings.NewReader(text), "e.csv", store.TableOptions{})
		if err != nil || n < 0 || n > 1000 {
			return
		}
		for _, v := range tab.Features {
			if v > 1000 { // keep the graphs small
				return
			}
		}
		g, err := FromEdges(context.Background(), "e.csv", tab, EdgeOptions{Rows: n})
		if err != nil {
			return
		}
		if _, err := NewCSR(g.RowPtr, g.Col, g.Val); err != nil {
			t.Fatalf("FromEdges gave an invalid graph: %v", err)
		}
	})
}

// TestFromEdgesProgress checks that both passes over the edges report.
func TestFromEdgesProgress(t *testing.T) {
	var calls [][2]int
	_, err := FromEdges(context.Background(), "e.csv", edgeTable(t, "src,dst\n0,1\n1,2\n"), EdgeOptions{Progress: func(pass string, done, total int) {
		if pass != "edge list" {
			t.Errorf("pass %q", pass)
		}
		calls = append(calls, [2]int{done, total})
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{1, 2}, {2, 2}}; !slices.Equal(calls, want) {
		t.Errorf("progress %v, want %v", calls, want)
	}
}
