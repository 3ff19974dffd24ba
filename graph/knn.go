package graph

import (
	"cmp"
	"context"
	"fmt"
	"hash/crc32"
	"math"
	"runtime/debug"

	"github.com/ssnmf/ssnmf/internal/enum"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
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
	// Kernel is the family of the distance kernels (see tile.Pairs):
	// tile.ISAAuto, the zero value, for the fastest this CPU runs; every
	// family gives the same graph.
	Kernel tile.ISA
	// Progress, if not nil, is called after each tile of the search, with
	// pass "kNN", in order (the tile engine's Progress hook).
	Progress func(pass string, done, total int)
	// Search, if not nil, runs the search elsewhere, as the tasks of a
	// batch system's job step do (package cluster): it returns the parts
	// (KNNRows) that cover the rows, which KNN joins (JoinKNN) into the same
	// graph.
	Search func(ctx context.Context, x []float64, n, p int, opt KNNOptions) ([]*KNNPart, error)
	// LeafRound, if not nil, runs the rounds of leaf pairs of the
	// approximate search elsewhere, as the tasks of a batch system's job
	// step do (package cluster): it returns the parts (LeafRoundRows) of
	// round r, which the search merges into its lists, in order, with the
	// lists and the graph of the round run here. opt.Leaf is set. The rest
	// of the search (the partition's tiles, descent, the recall) runs here.
	LeafRound func(ctx context.Context, x []float64, n, p int, opt KNNOptions, r *LeafRound) ([]*KNNPart, error)
	// File, if not empty, is the CSR file (see OpenFile) the graph is
	// assembled in and kept in, memory-mapped, so that its entries are
	// file-backed pages instead of heap. If File already holds the graph of
	// the same rows and options, KNN opens it instead of searching again
	// (as a resumed run does). Close releases it.
	File string

	// Method is the search: Exact, Approximate, or Auto (Approximate
	// above ApproxMinRows rows). See KNN.
	Method KNNMethod
	// Leaf is the number of rows of a leaf of the approximate search:
	// the rows must be in the order of Partition with the same leaf, so
	// that every run of Leaf rows is a leaf; DefaultLeaf if 0.
	Leaf int
	// Probes is the effort of the approximate search: the leaves searched
	// with each leaf in a round; DefaultProbes if 0.
	Probes int
	// Recall is the sampled recall@M at which the approximate search stops
	// refining; DefaultRecall if 0. Above 1, it refines until the lists
	// settle or Rounds is reached.
	Recall float64
	// Rounds caps the rounds of the approximate search; DefaultRounds if 0.
	Rounds int
	// LeafRounds is the least number of rounds of leaf pairs of the
	// approximate search before a round of neighbour descent, row by row
	// (see KNN); DefaultLeafRounds if 0. If < 0 there is no descent: every
	// round searches leaf pairs. DescentForward and DescentReverse are the candidates of a row
	// in descent, its nearest neighbours and its nearest reverse ones;
	// DefaultDescentForward and DefaultDescentReverse if 0.
	LeafRounds                     int
	DescentForward, DescentReverse int
	// Sample is the number of rows whose exact lists measure the recall
	// of the approximate search: 0 chooses it (1,000 rows up to n = 2·10⁶,
	// fewer above, at least 100), < 0 measures nothing (the search then
	// stops when its lists settle).
	Sample int
	// Seed seeds the approximate search's sample of rows.
	Seed uint64
	// Order, if not nil, is the approximate search's map from the rows of
	// x, in the order of Partition, to the input's rows (Partition's
	// result): ties in distance go to the lower input row, as the exact
	// search of the rows in the input's order breaks them, so that the
	// lists, where the search is complete, are the exact search's,
	// renumbered, duplicated rows included. Nil ranks the rows of x as
	// they stand. The exact search refuses it.
	Order []int32
	// ScratchDir, if not empty, is the directory where the approximate
	// search keeps its candidate lists (n·M·12 bytes), the vector kernel's
	// panels and neighbour descent's candidates, and the assembly of the
	// graph the reverse halves of its edges (n·M·16 bytes), in unlinked
	// files, instead of the heap, once ScratchMemory is spent.
	ScratchDir string
	// ScratchMemory is how many bytes of that scratch may be anonymous
	// memory (outside the Go heap, never written to disk) at a time. Each
	// piece goes there whole if the rest of the budget holds it, else to
	// ScratchDir. The search rewrites its lists every round, and the
	// kernel writes a file's dirty pages back to disk as it goes; so a
	// budget that holds them spares that traffic, while one below the
	// memory at hand lets a search larger than memory run in files.
	ScratchMemory int64
	// Round, if not nil, is called after each round of the approximate
	// search with its number (from 1) and what it did.
	Round func(round int, r KNNRound)
	// Stats, if not nil, is set to what the search did.
	Stats *KNNStats
	// backwardRange and backwardChunk, if not 0, replace descent's (the
	// tests' small ones).
	backwardRange, backwardChunk int
	// fullForward makes descent's forward pass take every row its slow
	// way, the tests' reference for its shortcut.
	fullForward bool
	// spillWindow, if not 0, makes descent set aside offers beyond this
	// many rows of the joins, wherever the lists are (the tests').
	spillWindow int
	// partRows, if not 0, runs the leaf rounds by parts of this many rows
	// (rounded up to whole leaves), wherever the lists are (the tests').
	partRows int
}

// KNNMethod is a kNN search.
type KNNMethod int

const (
	// Auto is Exact up to ApproxMinRows rows and Approximate above.
	Auto KNNMethod = iota
	// Exact finds the M nearest rows of every row: O(n²) distances.
	Exact
	// Approximate finds about the M nearest, with a measured recall, in
	// O(n·M) memory and O(n·Probes·Leaf) distances a round.
	Approximate
)

// ApproxMinRows is the number of rows above which Auto searches
// approximately.
const ApproxMinRows = 50_000

var methodNames = [...]string{Auto: "auto", Exact: "exact", Approximate: "approx"}

// String returns the name as the command line spells it.
func (m KNNMethod) String() string { return enum.Name(methodNames[:], m, "KNNMethod") }

// ParseKNNMethod returns the method named s ("auto", "exact" or "approx").
func ParseKNNMethod(s string) (KNNMethod, error) {
	return enum.Parse[KNNMethod](methodNames[:], s, "kNN search")
}

// Resolve returns the method that runs for n rows: Auto becomes Exact or
// Approximate.
func (m KNNMethod) Resolve(n int) KNNMethod {
	if m != Auto {
		return m
	}
	if n > ApproxMinRows {
		return Approximate
	}
	return Exact
}

// KNNStats says what a kNN search did.
type KNNStats struct {
	Method KNNMethod  // Exact or Approximate
	Reused bool       // the graph was found in KNNOptions.File, not searched
	Leaves int        // leaves of the approximate search
	Leaf   int        // rows of a leaf
	Tiles  int        // tiles (pairs of leaves) searched, in all rounds
	Rounds []KNNRound // the approximate search's rounds
	// Recall is the recall@M measured on RecallRows sampled rows: 1 for
	// the exact search, NaN if not measured.
	Recall     float64
	RecallRows int
	// Kernel names the kernel that screened the distances (see
	// tile.Pairs.Kernel), "" if the graph was not searched here.
	Kernel string
}

// KNNRound is what a round of the approximate search did.
type KNNRound struct {
	Tiles   int     // tiles searched
	Descent bool    // a round of neighbour descent, row by row, not of tiles
	Changed float64 // share of the rows whose list changed
	Recall  float64 // sampled recall@M after the round, NaN if not measured
	// Spilled is the bytes a round of descent set aside in files, its
	// lists being out of core, to give them to their rows once a pass was
	// done: its joins' offers and its reverse candidates.
	Spilled int64
	// Parts is the parts of the rows by which a round of leaf pairs ran,
	// its lists being out of core (docs/knn.md, "Leaf rounds by parts"):
	// 0 if it ran at once.
	Parts int
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
// With Method Exact (Auto up to ApproxMinRows rows) the neighbours are
// exact. A row is always its own first neighbour; the
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
//
// With Method Approximate (Auto above ApproxMinRows rows) the rows must be
// in the order of Partition, so that every run of Leaf rows is a leaf of
// its tree. The search runs in rounds. A leaf round searches exactly, as
// above, a set of tiles that pair two leaves: each leaf with itself and
// its Probes nearest leaves by centroid first, then, each round, with the
// Probes leaves where its rows' neighbours' lists point most often and
// Probes more by centroid (neighbour descent, a leaf at a time). With
// LeafRounds >= 0, after LeafRounds of them, once a leaf round cuts the
// sampled misses (1 - recall) less than 2.5-fold, or at once without a
// sample, the rounds are of neighbour descent, row by row: each row is
// offered the rows on the candidate lists of its candidates, its
// DescentForward nearest neighbours and its DescentReverse nearest
// reverse neighbours (rows whose lists hold it, by their rank there),
// skipping pairs whose two entries were both candidates in the round
// before, and pairs of leaves searched together. A descent round
// that cuts the misses less than 1.5-fold, or changes fewer than 1% of
// the lists, is followed by a leaf round, which reaches rows that no list
// leads to. A row keeps its best M candidates by (distance, index), so the
// lists after a round are the best M of all the pairs searched, whatever
// the order of the work; a descent round's candidates are fixed before it
// starts, and each row's list is written under its lock: the graph has
// the same bits for any Workers and kernel. The recall@M of
// the lists is measured after every round on a seeded sample of rows
// (Sample) whose exact lists one scan of x finds, and the search stops at
// Recall, or after Rounds. The candidate lists, the kernel's panels and
// the assembly's reverse edges go to ScratchDir; Stats and Round report
// the rounds and the recall.
func KNN(ctx context.Context, x []float64, n, p int, opt KNNOptions) (*CSR, error) {
	m, err := checkKNN(x, n, p, opt)
	if err != nil {
		return nil, err
	}
	method := opt.Method.Resolve(n)
	stats := &KNNStats{Method: method, Recall: math.NaN()}
	if opt.Stats != nil {
		defer func() { *opt.Stats = *stats }()
	}
	var source uint64
	if opt.File != "" {
		source = knnSource(x, n, p, m, opt)
		if g, src, err := OpenFile(opt.File); err == nil && src == source {
			stats.Reused = true
			return g, nil
		} else if err == nil {
			g.Close()
		}
	}
	var nb *best
	sp := opt.scratchSpace()
	switch {
	case method == Approximate:
		var sc *store.Scratch
		var st *KNNStats
		if nb, sc, st, err = approxNeighbors(ctx, x, n, p, m, opt, sp); err != nil {
			return nil, err // a failed search's stats stay those of no search
		}
		stats = st
		defer sc.Release()
	case opt.Search != nil:
		o := opt
		o.Search, o.File, o.Progress, o.Stats = nil, "", nil, nil
		parts, err := opt.Search(ctx, x, n, p, o)
		if err != nil {
			return nil, err
		}
		*stats = KNNStats{Method: Exact, Recall: 1}
		return JoinKNN(x, n, p, opt, parts)
	default:
		o := opt
		o.Stats = stats
		if nb, _, err = neighbors(ctx, x, n, p, m, o, 0, 1); err != nil {
			return nil, err
		}
		stats.Recall = 1
	}
	// The search's panels and copies are garbage now, and its candidate
	// lists are after the assembly: their memory goes back to the
	// operating system at once, so that the peak resident memory a batch
	// scheduler counts is that of one phase, not of their sum.
	debug.FreeOSMemory()
	g, err := nb.graph(opt.Weights, opt.File, source, sp, max(1, opt.Workers))
	debug.FreeOSMemory()
	return g, err
}

// leafRounds returns the least rounds of leaf pairs before neighbour
// descent, 0 if there is none.
func (opt *KNNOptions) leafRounds() int {
	if opt.LeafRounds < 0 {
		return 0
	}
	return cmp.Or(opt.LeafRounds, DefaultLeafRounds)
}

// scratchSpace returns the space of ScratchDir and ScratchMemory.
func (opt *KNNOptions) scratchSpace() *store.ScratchSpace {
	return store.NewScratchSpace(opt.ScratchDir, opt.ScratchMemory)
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
	case opt.Method < Auto || opt.Method > Approximate:
		return 0, fmt.Errorf("graph: unknown kNN search %d", opt.Method)
	case opt.Probes < 0 || opt.Rounds < 0 || opt.Leaf < 0:
		return 0, fmt.Errorf("graph: %d probes, %d rounds and leaves of %d rows, want them >= 0", opt.Probes, opt.Rounds, opt.Leaf)
	case opt.DescentForward < 0 || opt.DescentReverse < 0:
		return 0, fmt.Errorf("graph: descent of %d forward and %d reverse candidates, want them >= 0",
			opt.DescentForward, opt.DescentReverse)
	case !(opt.Recall >= 0) || math.IsInf(opt.Recall, 0):
		return 0, fmt.Errorf("graph: recall target %v, want a finite value >= 0", opt.Recall)
	case opt.Order != nil && opt.Method.Resolve(n) != Approximate:
		return 0, fmt.Errorf("graph: an order of the rows is for the approximate search")
	case opt.Order != nil && len(opt.Order) != n:
		return 0, fmt.Errorf("graph: an order of %d rows for %d rows", len(opt.Order), n)
	}
	if opt.Order != nil {
		seen := make([]uint64, (n+63)/64)
		for q, i := range opt.Order {
			if i < 0 || int(i) >= n || seen[i>>6]&(1<<(i&63)) != 0 {
				return 0, fmt.Errorf("graph: order[%d] = %d is not a permutation of %d rows", q, i, n)
			}
			seen[i>>6] |= 1 << (i & 63)
		}
	}
	return min(m, n), nil
}

// knnSource tags a kNN graph's file with what it was built from: a
// CRC-32C of the rows (low half) and of the shape and options (high half).
func knnSource(x []float64, n, p, m int, opt KNNOptions) uint64 {
	rows := crc32.Checksum(store.AsBytes(x), castagnoli)
	tag := fmt.Appendf(nil, "knn v1 n=%d p=%d m=%d weights=%v", n, p, m, opt.Weights)
	if method := opt.Method.Resolve(n); method != Exact {
		tag = fmt.Appendf(tag, " %v leaf=%d probes=%d recall=%v rounds=%d sample=%d seed=%d",
			method, opt.Leaf, opt.Probes, opt.Recall, opt.Rounds, opt.Sample, opt.Seed)
		if after := opt.leafRounds(); after > 0 {
			tag = fmt.Appendf(tag, " descent after=%d forward=%d reverse=%d", after, opt.DescentForward, opt.DescentReverse)
		}
		if opt.Order != nil {
			tag = fmt.Appendf(tag, " order=%08x", crc32.Checksum(store.AsBytes(opt.Order), castagnoli))
		}
	}
	opts := crc32.Checksum(tag, castagnoli)
	return uint64(opts)<<32 | uint64(rows)
}
