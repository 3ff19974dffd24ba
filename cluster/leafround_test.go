package cluster

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/vfs"
)

// TestLeafRoundSameBits checks that the approximate kNN search with its
// rounds of leaf pairs run as steps gives graph.KNN's graph and rounds, for
// 1 to 5 tasks, one step a round of leaf pairs, also when a task of a step
// dies and the step is launched again.
func TestLeafRoundSameBits(t *testing.T) {
	const n, p, leaf = 2000, 5, 40
	x := features(n, p, 6)
	if _, err := graph.Partition(context.Background(), x, n, p, leaf, 3, 2); err != nil {
		t.Fatal(err)
	}
	// Every row has a copy, so that ties decide lists, and ties go by an
	// input order other than the rows' (as after Partition), which the
	// steps must follow too.
	for i := 1; i < n; i += 2 {
		copy(x[i*p:(i+1)*p], x[(i-1)*p:i*p])
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(n - 1 - i)
	}
	opt := graph.KNNOptions{Method: graph.Approximate, Neighbors: 9, Weights: graph.SelfTuning, Leaf: leaf, Workers: 2,
		Probes: 2, Recall: 0.999, Sample: 200, Seed: 5, Order: order, LeafRounds: -1}
	var want graph.KNNStats
	o := opt
	o.Stats = &want
	wantG, err := graph.KNN(context.Background(), x, n, p, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Rounds) < 2 {
		t.Fatalf("%d rounds, want some refinement to test", len(want.Rounds))
	}
	for _, tc := range []struct {
		tasks int
		l     Launcher
	}{
		{1, &inProcess{}},
		{2, &inProcess{}},
		{5, &inProcess{}},
		// Task 1 dies in the first try of pass 2: the step is launched
		// again, and the tasks that finished keep their parts.
		{3, &inProcess{fail: func(pass uint64, task, try int) bool { return pass == 2 && task == 1 && try == 0 }}},
	} {
		c := &Coordinator{Path: t.TempDir(), Tasks: tc.tasks, Launcher: tc.l, Retries: 1}
		var got graph.KNNStats
		o := opt
		o.Stats, o.LeafRound = &got, c.LeafRound
		g, err := graph.KNN(context.Background(), x, n, p, o)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.RowPtr, wantG.RowPtr) || !slices.Equal(g.Col, wantG.Col) || !slices.Equal(g.Val, wantG.Val) {
			t.Fatalf("%d tasks: another graph than graph.KNN's", tc.tasks)
		}
		if !sameRounds(got.Rounds, want.Rounds) {
			t.Fatalf("%d tasks: rounds %+v, graph.KNN's %+v", tc.tasks, got.Rounds, want.Rounds)
		}
		leafRounds := 0 // rounds of descent run on the coordinator, not as steps
		for _, r := range want.Rounds {
			if !r.Descent {
				leafRounds++
			}
		}
		if c.Stats.Steps != leafRounds+c.Stats.Retries {
			t.Fatalf("%d tasks: %d steps (%d retried) for %d rounds of leaf pairs", tc.tasks, c.Stats.Steps, c.Stats.Retries, leafRounds)
		}
		left, _ := filepath.Glob(filepath.Join(c.Path, "pass-*"))
		if len(left) > 0 {
			t.Fatalf("%d tasks: left behind: %v", tc.tasks, left)
		}
		t.Logf("%d tasks: %d rounds as %d steps (%d retried), the graph of graph.KNN", tc.tasks, len(got.Rounds), c.Stats.Steps, c.Stats.Retries)
	}
}

// sameRounds compares rounds whose recall may be NaN.
func sameRounds(a, b []graph.KNNRound) bool {
	return slices.EqualFunc(a, b, func(r, s graph.KNNRound) bool {
		return r.Tiles == s.Tiles && r.Descent == s.Descent && r.Changed == s.Changed && (r.Recall == s.Recall || r.Recall != r.Recall && s.Recall != s.Recall)
	})
}

// FuzzLeafRoundInput checks that reading any payload as a leaf round's
// input, or as a kNN part, returns an error or values of the shape its
// header gives, and never panics.
func FuzzLeafRoundInput(f *testing.F) {
	tiles := []int32{0, 0, 0, 1, 1, 1}
	bounds := []float64{1, 2, 3}
	f.Add(uint64(3), uint64(3), slices.Concat(store.AsBytes(tiles), store.AsBytes(bounds)))
	f.Add(uint64(3), uint64(1), store.AsBytes([]float64{1, 2, 3, 4}))
	f.Add(uint64(1<<62), uint64(1<<62), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, rows, cols uint64, payload []byte) {
		h := Header{Kind: LeafRoundInput, Rows: rows, Cols: cols}
		if r, err := leafRoundOf(h, payload, 4); err == nil && (uint64(len(r.Tiles)) != cols || uint64(len(r.Bounds)) != rows) {
			t.Fatalf("a round of %d tiles and %d bounds, the header says %d and %d", len(r.Tiles), len(r.Bounds), cols, rows)
		}
		if kp, err := knnPartOf(Header{Kind: KNNPart, Rows: rows, Cols: cols}, payload); err == nil &&
			(uint64(len(kp.Rows)) != rows || uint64(kp.M) != cols || uint64(len(kp.Dist)) != rows*cols) {
			t.Fatalf("a part of %d rows of %d, the header says %d of %d", len(kp.Rows), kp.M, rows, cols)
		}
	})
}

// TestDumpLeafRound checks that dump names a leaf round's input and shows
// its first tiles.
func TestDumpLeafRound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pass-000001.in")
	payload := slices.Concat(store.AsBytes([]int32{0, 0, 0, 3}), store.AsBytes([]float64{1, 2}))
	if _, err := writeBlock(vfs.OS{}, path, Header{Kind: LeafRoundInput, Pass: 1, Rows: 2, Cols: 2, Source: 9}, payload); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Dump(&out, path); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"leaf round input", "2×2", "first values [0 0 0 3"} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Fatalf("dump says %q, want %q in it", out.String(), want)
		}
	}
}
