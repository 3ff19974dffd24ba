package graph

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/tile"
)

// inParts runs a round of leaf pairs as parts parts, each LeafRoundRows on
// workers goroutines, as the tasks of a step would, and counts the rounds.
func inParts(parts, workers int, rounds *int) func(context.Context, []float64, int, int, KNNOptions, *LeafRound) ([]*KNNPart, error) {
	return func(ctx context.Context, x []float64, n, p int, opt KNNOptions, r *LeafRound) ([]*KNNPart, error) {
		*rounds++
		if opt.LeafRound != nil || opt.Leaf != r.Leaf {
			return nil, fmt.Errorf("the options of a part: LeafRound set, or leaf %d in a round of leaves of %d", opt.Leaf, r.Leaf)
		}
		opt.Workers = workers
		out := make([]*KNNPart, parts)
		for t := range parts {
			var err error
			if out[t], err = LeafRoundRows(ctx, x, n, p, opt, r, t, parts); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}

// TestLeafRoundSameBits checks that the approximate search with its rounds
// of leaf pairs run as parts (KNNOptions.LeafRound) gives the lists, the
// rounds and the graph of the search run here, for any parts, workers and
// kernel, with and without neighbour descent between the leaf rounds.
func TestLeafRoundSameBits(t *testing.T) {
	const n, p, m, leaf = 5000, 6, 12, 64
	x := clustered(n, p, 11)
	if _, err := Partition(context.Background(), x, n, p, leaf, 1, 2); err != nil {
		t.Fatal(err)
	}
	for _, descent := range []int{0, 1} {
		opt := KNNOptions{Method: Approximate, Weights: SelfTuning, Neighbors: m, Leaf: leaf, Workers: 2, Probes: 3,
			Recall: 0.999, Rounds: 8, Sample: 300, LeafRounds: descent}
		var want KNNStats
		o := opt
		o.Stats = &want
		wantG, err := KNN(context.Background(), x, n, p, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			parts, workers int
			kernel         tile.ISA
		}{{1, 1, tile.ISAAuto}, {2, 3, tile.ISAAuto}, {3, 1, tile.ISAGo}, {7, 2, tile.ISAAuto}} {
			var got KNNStats
			var rounds int
			o := opt
			o.Stats, o.Kernel, o.LeafRound = &got, tc.kernel, inParts(tc.parts, tc.workers, &rounds)
			g, err := KNN(context.Background(), x, n, p, o)
			if err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("descent after %d, %d parts of %d workers, kernel %v", descent, tc.parts, tc.workers, tc.kernel)
			if !sameCSR(g, wantG) {
				t.Fatalf("%s: another graph than the search run here", what)
			}
			leafRounds := 0
			for q, r := range want.Rounds {
				if !r.Descent {
					leafRounds++
				}
				if s := got.Rounds[q]; s.Tiles != r.Tiles || s.Descent != r.Descent || s.Changed != r.Changed || math.Float64bits(s.Recall) != math.Float64bits(r.Recall) {
					t.Fatalf("%s: round %d %+v, here %+v", what, q+1, s, r)
				}
			}
			if len(got.Rounds) != len(want.Rounds) || rounds != leafRounds {
				t.Fatalf("%s: %d rounds, %d of them elsewhere; here %d rounds, %d of leaf pairs", what, len(got.Rounds), rounds, len(want.Rounds), leafRounds)
			}
			if descent > 0 && leafRounds == len(want.Rounds) {
				t.Fatalf("%s: no round of descent in %+v", what, want.Rounds)
			}
		}
		t.Logf("descent after %d leaf rounds: %d rounds, sampled recall %.4f: the same graph and rounds in 1, 2, 3 and 7 parts", descent, len(want.Rounds), want.Recall)
	}
}

// TestLeafRoundRefusals checks that a part refuses a round that does not
// fit the rows, and the search a part that does not fit its lists.
func TestLeafRoundRefusals(t *testing.T) {
	const n, p = 100, 2
	x := points(n, p, 3)
	bounds := make([]float64, n)
	for _, tc := range []struct {
		name string
		r    LeafRound
		want string
	}{
		{"no leaf", LeafRound{Leaf: 0, Bounds: bounds}, "leaves of 0 rows"},
		{"short bounds", LeafRound{Leaf: 10, Bounds: bounds[:5]}, "5 bounds for 100 rows"},
		{"tile past the leaves", LeafRound{Leaf: 10, Bounds: bounds, Tiles: []LeafPair{{0, 10}}}, "want 0 <= I <= J < 10"},
		{"tile upside down", LeafRound{Leaf: 10, Bounds: bounds, Tiles: []LeafPair{{3, 2}}}, "leaves 3,2"},
		{"NaN bound", LeafRound{Leaf: 10, Bounds: append([]float64{math.NaN()}, bounds[1:]...)}, "row 0 is NaN"},
	} {
		if _, err := LeafRoundRows(context.Background(), x, n, p, KNNOptions{Neighbors: 5}, &tc.r, 0, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := LeafRoundRows(context.Background(), x, n, p, KNNOptions{}, &LeafRound{Leaf: 10, Bounds: bounds}, 2, 2); err == nil {
		t.Error("part 2 of 2 taken")
	}
	good := &KNNPart{M: 3, Rows: []int32{4}, Count: []int32{1}, Dist: []float64{1, 0, 0}, Index: []int32{5, 0, 0}}
	if err := good.checkCandidates(n, 3); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(kp *KNNPart){
		func(kp *KNNPart) { kp.M = 4 },
		func(kp *KNNPart) { kp.Rows[0] = n },
		func(kp *KNNPart) { kp.Count[0] = 4 },
		func(kp *KNNPart) { kp.Index[0] = -1 },
		func(kp *KNNPart) { kp.Dist[0] = math.NaN() },
		func(kp *KNNPart) { kp.Dist = kp.Dist[:2] },
	} {
		kp := &KNNPart{M: good.M, Rows: slices.Clone(good.Rows), Count: slices.Clone(good.Count), Dist: slices.Clone(good.Dist), Index: slices.Clone(good.Index)}
		bad(kp)
		if err := kp.checkCandidates(n, 3); err == nil {
			t.Errorf("a bad part %+v taken", kp)
		}
	}
}
