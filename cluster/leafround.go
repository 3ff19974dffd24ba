package cluster

import (
	"context"
	"fmt"
	"slices"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
)

// LeafRound runs a round of leaf pairs of the approximate kNN search of the
// n×p rows x (in the order of graph.Partition, with leaves of r.Leaf rows)
// as one step, and returns its parts (graph.LeafRoundRows) in task order,
// which the search merges into its lists. It serves as
// graph.KNNOptions.LeafRound. The features are written to the run
// directory at the first round; each round writes only its tiles, the
// rows' bounds and, if the search has one, the rows' input order for ties
// (8 bytes a tile, 8 or 12 a row).
func (c *Coordinator) LeafRound(ctx context.Context, x []float64, n, p int, opt graph.KNNOptions, r *graph.LeafRound) ([]*graph.KNNPart, error) {
	m := opt.Neighbors
	if m == 0 {
		m = graph.DefaultNeighbors
	}
	spec := Spec{Kernel: KNN, N: n, P: p, BlockSize: min(r.Leaf, n), Neighbors: min(m, n), Weights: opt.Weights.String(), Family: c.family()}
	if !c.holds(spec, x) {
		if err := c.prepare(spec, x); err != nil {
			return nil, err
		}
	}
	tiles := make([]int32, 0, 2*len(r.Tiles))
	for _, t := range r.Tiles {
		tiles = append(tiles, t.I, t.J)
	}
	parts := make([]*graph.KNNPart, c.Tasks)
	h := Header{Kind: LeafRoundInput, Rows: uint64(n), Cols: uint64(len(r.Tiles))}
	err := c.run(ctx, h, slices.Concat(store.AsBytes(tiles), store.AsBytes(r.Bounds), store.AsBytes(r.Order)), func(t int, h Header, payload []byte) (err error) {
		parts[t], err = knnPartOf(h, payload)
		return err
	})
	return parts, err
}

// holds reports whether the coordinator's run directory is already that of
// spec and the features x, as in the rounds after the first of a search.
func (c *Coordinator) holds(spec Spec, x []float64) bool {
	if c.dir == nil || len(c.dir.X) != len(x) || len(x) > 0 && &c.dir.X[0] != &x[0] {
		return false
	}
	spec.Features = c.dir.Spec.Features
	return spec == c.dir.Spec
}

// leafRoundOf returns the round of leaf pairs of a LeafRoundInput's
// header and payload, for leaves of leaf rows; graph.LeafRoundRows checks
// the tiles and the bounds against the rows.
func leafRoundOf(h Header, payload []byte, leaf int) (*graph.LeafRound, error) {
	tiles, n := h.Cols, h.Rows
	if tiles > uint64(len(payload))/8 || n > uint64(len(payload))/8 {
		return nil, fmt.Errorf("a round of %d tiles and %d rows in %d bytes", tiles, n, len(payload))
	}
	order := 0 // the order's section, if the payload has one
	if uint64(len(payload)) == 8*tiles+12*n {
		order = 4 * int(n)
	}
	s, err := cut(payload, 8*int(tiles), 8*int(n), order)
	if err != nil {
		return nil, err
	}
	ij := int32s(s[0])
	r := &graph.LeafRound{Leaf: leaf, Tiles: make([]graph.LeafPair, tiles), Bounds: float64s(s[1])}
	if order > 0 {
		r.Order = int32s(s[2])
	}
	for q := range r.Tiles {
		r.Tiles[q] = graph.LeafPair{I: ij[2*q], J: ij[2*q+1]}
	}
	return r, nil
}
