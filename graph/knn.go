package graph

import (
	"context"
	"fmt"
	"hash/crc32"
	"runtime/debug"

	"github.com/ssnmf/ssnmf/internal/enum"
	"github.com/ssnmf/ssnmf/store"
)

// DefaultNeighbors is the number of neighbours of KNNOptions when
// Neighbors is 0, the row itself included.
const DefaultNeighbors = 30

// SigmaNeighbor is the neighbour whose distance is a row's scale σ_i in
// the self-tuning weights: the 7th nearest other row (Zelnik-Manor &
// Perona).
const SigmaNeighbor = 7

// Weights says how the kNN graph weighs an edge.
type Weights int

const (
	// Connectivity weighs every edge 1.
	Connectivity Weights = iota
	// SelfTuning weighs the edge of rows i and j exp(-d²/(σ_i σ_j)), with
	// σ_i the distance of row i to its SigmaNeighbor-th nearest other row
	// (the farthest it has, with fewer neighbours), floored at 1e-3 times
	// the median of the positive σ (1 if there is none), so that duplicated
	// rows cannot make it 0.
	SelfTuning
)

var weightNames = [...]string{Connectivity: "connectivity", SelfTuning: "self-tuning"}

// String returns the name as the command line spells it.
func (w Weights) String() string { return enum.Name(weightNames[:], w, "Weights") }

// ParseWeights returns the weights named s ("connectivity" or "self-tuning").
func ParseWeights(s string) (Weights, error) {
	return enum.Parse[Weights](weightNames[:], s, "weights")
}

// KNNOptions shape a kNN graph.
type KNNOptions struct {
	// Neighbors is M, the number of neighbours of a row, the row itself
	// included (cut to n); DefaultNeighbors if 0.
	Neighbors int
	Weights   Weights
	// BlockSize is the edge of the distance tiles; 256 if 0. Workers is
	// the number of goroutines; 1 if 0. Neither changes the graph.
	BlockSize, Workers int
	// Generic runs the portable distance kernel even where the vectorized
	// one is built (see tile.Pairs); the graph is the same.
	Generic bool
	// Progress, if not nil, is called after each tile of the search, with
	// pass "kNN", in order (the tile engine's Progress hook).
	Progress func(pass string, done, total int)
	// Search, if not nil, runs the search elsewhere, as the tasks of a
	// batch system's job step do (package cluster): it returns the parts
	// (KNNRows) that cover the rows, which KNN joins (JoinKNN) into the same
	// graph.
	Search func(ctx context.Context, x []float64, n, p int, opt KNNOptions) ([]*KNNPart, error)
	// File, if not empty, is the CSR file (see OpenFile) the graph is
	// assembled in and kept in, memory-mapped, so that its entries are
	// file-backed pages instead of heap. If File already holds the graph of
	// the same rows and options, KNN opens it instead of searching again
	// (as a resumed run does). Close releases it.
	File string
}

// KNN returns the symmetrized M-nearest-neighbour graph of the n rows of x
// (n×p, row-major) in Euclidean distance:
//
//	P = W ∘ (C + Cᵀ)/2,
//
// where C_ij = 1 if j is one of the M neighbours of i, and W holds the
// weights (1, or the self-tuning exp(-d²/(σ_i σ_j))). A pair that are each
// other's neighbours gets its full weight, a pair where only one is the
// other's gets half of it, and P_ii = 1.
//
// The neighbours are exact. A row is always its own first neighbour; the
// others are the M-1 rows nearest to it, ties (duplicated rows among them,
// at distance 0) going to the lower index, so the graph does not depend on
// the order of the work. Rows equal in every feature are found first, and
// their pairs are settled without a distance; a row with M-1 or more
// copies has them as its neighbours and takes no part in the search, so
// that a data set of many copies costs what its distinct rows cost. The
// other squared distances are screened once for each pair, over the tiles
// of the upper triangle, on Workers goroutines (see tile.Pairs), the rows
// in the order of their projection on the principal direction so that
// near rows meet early and prune the rest; a row keeps its best M
// candidates, O(n·M) memory in all, never O(n²). The result has the same
// bits for any BlockSize, Workers and distance kernel.
func KNN(ctx context.Context, x []float64, n, p int, opt KNNOptions) (*CSR, error) {
	m, err := checkKNN(x, n, p, opt)
	if err != nil {
		return nil, err
	}
	var source uint64
	if opt.File != "" {
		source = knnSource(x, n, p, m, opt.Weights)
		if g, src, err := OpenFile(opt.File); err == nil && src == source {
			return g, nil
		} else if err == nil {
			g.Close()
		}
	}
	if opt.Search != nil {
		o := opt
		o.Search, o.File, o.Progress = nil, "", nil
		parts, err := opt.Search(ctx, x, n, p, o)
		if err != nil {
			return nil, err
		}
		return JoinKNN(x, n, p, opt, parts)
	}
	nb, _, err := neighbors(ctx, x, n, p, m, opt, 0, 1)
	if err != nil {
		return nil, err
	}
	// The search's panels and copies are garbage now, and its candidate
	// lists are after the assembly: their memory goes back to the
	// operating system at once, so that the peak resident memory a batch
	// scheduler counts is that of one phase, not of their sum.
	debug.FreeOSMemory()
	g, err := nb.graph(opt.Weights, opt.File, source)
	debug.FreeOSMemory()
	return g, err
}

// checkKNN checks the arguments of a kNN build and returns its M, cut to n.
func checkKNN(x []float64, n, p int, opt KNNOptions) (int, error) {
	m := opt.Neighbors
	if m == 0 {
		m = DefaultNeighbors
	}
	switch {
	case n < 1 || p < 0 || len(x) != n*p:
		return 0, fmt.Errorf("graph: kNN of %d values as %d rows of %d features", len(x), n, p)
	case m < 1:
		return 0, fmt.Errorf("graph: %d neighbours, want at least 1", m)
	case opt.Weights != Connectivity && opt.Weights != SelfTuning:
		return 0, fmt.Errorf("graph: unknown weights %v", opt.Weights)
	case opt.BlockSize < 0 || opt.Workers < 0:
		return 0, fmt.Errorf("graph: negative BlockSize or Workers")
	}
	return min(m, n), nil
}

// knnSource tags a kNN graph's file with what it was built from: a
// CRC-32C of the rows (low half) and of the shape and options (high half).
func knnSource(x []float64, n, p, m int, w Weights) uint64 {
	rows := crc32.Checksum(store.AsBytes(x), castagnoli)
	opts := crc32.Checksum(fmt.Appendf(nil, "knn v1 n=%d p=%d m=%d weights=%v", n, p, m, w), castagnoli)
	return uint64(opts)<<32 | uint64(rows)
}
