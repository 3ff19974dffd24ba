// Package affinity builds the affinity matrix P of a run from what the user
// gives: the Gaussian kernel of a table's feature rows, generated tile by
// tile (standardized features, a bandwidth given or chosen by
// tile.AutoBandwidth or tile.MassBandwidth), the kNN graph of the feature rows (package graph),
// a tile file written by "ssnmf tiles", or an edge list (Parquet, Arrow or
// CSV with the columns src, dst and, optionally, weight; see graph.FromEdges),
// told apart by their content, and its scale: a sparse P is multiplied so
// that its entries sum to n²/k, the mass of k balanced clusters, unless
// Spec.Scale says otherwise, and may then be rescaled to the mass of
// clusters of given sizes (Built.ScaleToSizes) and by a multiple of either
// rule (Built.MultiplyScale); docs/quality.md gives why. It is the
// one place where a kind of affinity is set up; the command and every
// script build P through Build, and every method consumes the result as
// an fw.Affinity.
package affinity

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/internal/enum"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/store/tilefile"
	"github.com/ssnmf/ssnmf/tile"
)

// Spec says what P is and how its passes run.
type Spec struct {
	// File, if not empty, is a tile file or an edge list holding P;
	// otherwise P is the Gaussian kernel of the features.
	File string
	// Rows is the number of rows of an edge list File when tab is nil; 0
	// takes it from the largest id (see graph.EdgeOptions).
	Rows int
	// MapDir, if not empty, is a directory where a large edge list is
	// mapped while it is read (see store.TableOptions.MapDir).
	MapDir string
	// Gamma is the kernel bandwidth, > 0; 0 chooses it by GammaRule. With
	// a File it is read from the file's metadata, and Gamma (or the rule,
	// given the features) only serves a k-means start.
	Gamma float64
	// GammaRule chooses the bandwidth when Gamma is 0.
	GammaRule Rule
	// Clusters is k, which the mass rules need (GammaRule Mass, and a
	// sparse P's Scale 0).
	Clusters int
	// Scale multiplies a sparse P (a kNN graph or an edge list): > 0 is
	// the factor, 0 chooses it by the mass rule, n²/(k·ΣP), so that P has
	// the mass of k balanced clusters (1 if Clusters < 2).
	Scale float64
	// Standardize z-scores every feature in place before anything else.
	Standardize bool
	// Precision of the kernel values.
	Precision tile.Precision
	// BlockSize is the tile edge of the passes (cut to n; a File's own
	// block size overrides it); Workers the goroutines of the passes.
	BlockSize, Workers int
	// Seed seeds the bandwidth's sample.
	Seed uint64
	// Kernel is the family of the tile passes', the kNN search's and the
	// sparse P's products' kernels (tile.ISAAuto: the fastest this CPU
	// runs).
	Kernel tile.ISA
	// Progress, if not nil, is the tile engine's progress hook.
	Progress func(pass string, done, total int)
	// Name names the features' input in error messages.
	Name string
	// Graph, if not nil, makes P the kNN graph of the features (the
	// bandwidth then only serves a k-means start). BlockSize and Workers
	// apply to its build.
	Graph *graph.KNNOptions
	// Engine, if not nil, runs the O(n²) work of a P made from the
	// features elsewhere: the search of a kNN graph (the exact one whole,
	// the approximate one's rounds of leaf pairs), and the passes of the
	// Gaussian kernel (package cluster). A tile file or an edge list is
	// read here either way.
	Engine Engine
	// GraphFile, if not empty, is the CSR file a sparse P (a kNN graph or
	// an edge list) is assembled and kept in, memory-mapped (see
	// graph.OpenFile). A kNN graph of the same features and options
	// already there is opened instead of built again.
	GraphFile string
}

// Engine runs the O(n²) work of P on other machines, with the same bits
// as here: cluster.Coordinator, whose tasks are a batch system's job steps.
type Engine interface {
	// SearchKNN searches the neighbours of the n×p rows x, as the parts
	// of graph.KNNRows; it serves as graph.KNNOptions.Search.
	SearchKNN(ctx context.Context, x []float64, n, p int, opt graph.KNNOptions) ([]*graph.KNNPart, error)
	// LeafRound runs a round of leaf pairs of the approximate search, as
	// the parts of graph.LeafRoundRows; it serves as
	// graph.KNNOptions.LeafRound.
	LeafRound(ctx context.Context, x []float64, n, p int, opt graph.KNNOptions, r *graph.LeafRound) ([]*graph.KNNPart, error)
	// Gaussian returns the Gaussian kernel of the n×p rows x, whose passes
	// run elsewhere, in tiles of edge block.
	Gaussian(x []float64, n, p int, gamma float64, prec tile.Precision, block int) (fw.Affinity, error)
}

// Rule is a rule that chooses the Gaussian kernel's bandwidth from the data.
type Rule int

const (
	// Neighbor is tile.AutoBandwidth: the scale of the distance of a row
	// to its 10th nearest neighbour.
	Neighbor Rule = iota
	// Mass is tile.MassBandwidth: P has the mass of k balanced clusters.
	Mass
)

var ruleNames = [...]string{Neighbor: "neighbor", Mass: "mass"}

// String returns the rule's name as the command line spells it.
func (r Rule) String() string { return enum.Name(ruleNames[:], r, "Rule") }

// ParseRule returns the rule named s ("neighbor" or "mass").
func ParseRule(s string) (Rule, error) { return enum.Parse[Rule](ruleNames[:], s, "bandwidth rule") }

// Built is an affinity matrix with what a run reports about it.
type Built struct {
	fw.Affinity              // P, for the methods
	Engine      *tile.Engine // the engine of the tile passes; nil for a graph
	BlockSize   int          // the tile edge in force
	Gamma       float64      // the bandwidth of the kernel, or for a k-means start
	GammaRule   string       // "given", how the automatic rule went, or "tile file"
	Scale       float64      // the factor of a sparse P (1 for a dense one)
	ScaleRule   string       // how Scale was chosen; empty for a dense P
	// Checksum is a CRC-32C of the features as the kernel uses them, or
	// of a tile file's header: a resumed run checks that P is the same.
	Checksum uint32
	// Order, if not nil, is the order of the rows of the features, of P
	// and so of W: Order[q] is the input's row at position q. The
	// approximate kNN search moves the rows into the leaves of
	// graph.Partition, so that near rows are near in P; a W solved on P
	// is put back into the input's order by it. Nil is the input's order.
	Order []int32
	// KNN is what the search of a kNN graph did.
	KNN   graph.KNNStats
	file  *tilefile.File
	graph *graph.CSR
	knn   graph.KNNOptions
	edges bool // the graph is an edge list's
	p     int
}

// Build sets up P for spec. tab holds the features; it may be nil when
// spec.File is given. The features are standardized in place if
// spec.Standardize is set. The result must be closed.
func Build(ctx context.Context, tab *store.Table, spec Spec) (*Built, error) {
	switch {
	case tab == nil && spec.File == "":
		return nil, errors.New("affinity: no features and no tile file")
	case spec.File != "" && spec.Graph != nil:
		return nil, errors.New("affinity: a tile file and a kNN graph at once")
	}
	if !(spec.Gamma >= 0) || math.IsInf(spec.Gamma, 0) {
		return nil, fmt.Errorf("affinity: gamma %v, want a finite value >= 0", spec.Gamma)
	}
	if !(spec.Scale >= 0) || math.IsInf(spec.Scale, 0) {
		return nil, fmt.Errorf("affinity: scale %v, want a finite value >= 0", spec.Scale)
	}
	b := &Built{BlockSize: spec.BlockSize, Scale: 1}
	if tab != nil {
		b.p = tab.P
		if spec.Standardize {
			if err := tile.StandardizeWorkers(tab.Features, tab.N, tab.P, spec.Workers); err != nil {
				return nil, err
			}
		} else if err := checkRaw(tab, spec.Name); err != nil {
			return nil, err
		}
	}
	if spec.File != "" {
		if err := input.RequireFile(spec.File, "a tile file is mapped, and an edge list is told from one by its first bytes"); err != nil {
			return nil, err
		}
		f, err := tilefile.Open(spec.File, spec.Workers)
		if err != nil {
			return b.openEdges(ctx, tab, spec, err)
		}
		if tab != nil && tab.N != f.N() {
			f.Close()
			return nil, fmt.Errorf("%s holds P for n = %d, but %s has %d rows", spec.File, f.N(), spec.Name, tab.N)
		}
		b.file, b.BlockSize = f, f.Block()
		b.Engine = &tile.Engine{Source: f, BlockSize: b.BlockSize, Workers: spec.Workers, ISA: spec.Kernel}
		b.Checksum = crc32.Checksum(fmt.Appendf(nil, "%d %d %v %v", f.N(), f.Block(), f.Float32(), f.Meta()), castagnoli)
		// The bandwidth the file was written with, for a k-means start.
		b.GammaRule = "tile file"
		if g, err := strconv.ParseFloat(f.Meta()["gamma"], 64); err == nil && g > 0 && !math.IsInf(g, 0) {
			b.Gamma = g
		} else if tab != nil {
			if err := b.bandwidth(tab, spec); err != nil {
				f.Close()
				return nil, err
			}
			b.GammaRule = "tile file; for the k-means start " + b.GammaRule
		}
	} else if spec.Graph != nil {
		return b.buildGraph(ctx, tab, spec)
	} else {
		if err := b.bandwidth(tab, spec); err != nil {
			return nil, err
		}
		b.BlockSize = min(b.BlockSize, tab.N)
		e, err := GaussianEngine(tab.Features, tab.N, tab.P, b.Gamma, spec.Precision, b.BlockSize, spec.Workers, spec.Kernel)
		if err != nil {
			return nil, err
		}
		b.Engine = e
		b.Checksum = crc32.Checksum(store.AsBytes(tab.Features), castagnoli)
	}
	b.Engine.Progress = spec.Progress
	b.Affinity = fw.Tiled(b.Engine)
	if spec.Engine != nil && b.file == nil {
		// The passes run elsewhere; the local engine only names the kernel.
		var err error
		if b.Affinity, err = spec.Engine.Gaussian(tab.Features, tab.N, tab.P, b.Gamma, spec.Precision, b.BlockSize); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// GaussianEngine returns the tile engine of the Gaussian kernel of the n
// feature rows x (n×p, row-major) with bandwidth gamma and values of
// precision prec, in tiles of block rows, its passes run by workers
// goroutines with the kernel family isa. It is the one place where the
// kernel's tiles are set up: a local run (Build) and a task of a Slurm run
// (package cluster) both generate P through it, so that their passes have
// the same bits.
func GaussianEngine(x []float64, n, p int, gamma float64, prec tile.Precision, block, workers int, isa tile.ISA) (*tile.Engine, error) {
	g, err := tile.NewGaussianPrecision(x, n, p, gamma, prec)
	if err != nil {
		return nil, err
	}
	return &tile.Engine{Source: g, BlockSize: block, Workers: workers, ISA: isa}, nil
}

// The kinds of P's file, as FileKind tells them apart.
const (
	TileFile = "a tile file"
	EdgeList = "an edge list"
)

// FileKind tells the kind of P's file at path by its content, as Build
// does: an Arrow IPC file without a src column (graph.ColSrc) is a
// TileFile, any other table an EdgeList. format is the file's format
// (input.Detect); an error leaves format "" if the file cannot be read as
// a table, and kind "" if its Arrow columns cannot be read.
func FileKind(path string) (format, kind string, err error) {
	if format, err = input.Detect(path); err != nil {
		return "", "", err
	}
	if format != input.Arrow {
		return format, EdgeList, nil
	}
	cols, err := input.ArrowColumns(path)
	switch {
	case err != nil:
		return format, "", err
	case slices.Contains(cols, graph.ColSrc):
		return format, EdgeList, nil
	}
	return format, TileFile, nil
}

// edgeHint is the hint of an edge list's column that is not numeric.
const edgeHint = "an edge list's src and dst are row ids (whole numbers >= 0) and its weight a number"

// openEdges makes P the graph of the edge list spec.File, which is not a
// tile file (tileErr says why). If it is no edge list either, the tile
// file's error is returned for an Arrow IPC file.
func (b *Built) openEdges(ctx context.Context, tab *store.Table, spec Spec, tileErr error) (*Built, error) {
	format, kind, err := FileKind(spec.File)
	switch {
	case format == "":
		return nil, err
	case kind != EdgeList:
		// The tile file's error says what is wrong with it.
		return nil, tileErr
	}
	etab, err := input.Open(spec.File, format, store.TableOptions{NumericHint: edgeHint}, spec.MapDir)
	if err != nil {
		return nil, err
	}
	defer etab.Close()
	opt := graph.EdgeOptions{Rows: spec.Rows, File: spec.GraphFile, Progress: spec.Progress}
	if tab != nil {
		opt.Rows = tab.N
	}
	g, err := graph.FromEdges(ctx, spec.File, etab, opt)
	if err != nil {
		return nil, err
	}
	b.edges = true
	b.Checksum = crc32.Update(crc32.Checksum(store.AsBytes(g.Val), castagnoli), castagnoli, store.AsBytes(g.Col))
	if tab != nil {
		if err := b.startBandwidth(tab, spec); err != nil {
			g.Close()
			return nil, err
		}
	}
	return b.useGraph(g, spec)
}

// buildGraph makes P the kNN graph of the features, its scratch files
// beside spec.GraphFile. For the approximate search it first moves the
// rows into the order of graph.Partition (b.Order), in place; the
// bandwidth of the k-means start is set before, on the rows in the
// input's order, so that it does not depend on the order.
func (b *Built) buildGraph(ctx context.Context, tab *store.Table, spec Spec) (*Built, error) {
	if err := b.startBandwidth(tab, spec); err != nil {
		return nil, err
	}
	opt := *spec.Graph
	opt.BlockSize, opt.Workers, opt.File, opt.Progress, opt.Kernel = spec.BlockSize, spec.Workers, spec.GraphFile, spec.Progress, spec.Kernel
	opt.Stats = &b.KNN
	if spec.GraphFile != "" {
		opt.ScratchDir = filepath.Dir(spec.GraphFile)
	}
	if opt.Method = opt.Method.Resolve(tab.N); opt.Method == graph.Approximate {
		opt.Seed = spec.Seed
		leaf := cmp.Or(opt.Leaf, graph.DefaultLeaf)
		order, err := graph.Partition(ctx, tab.Features, tab.N, tab.P, leaf, spec.Seed, spec.Workers)
		if err != nil {
			return nil, err
		}
		b.Order, opt.Order = order, order
		if spec.Engine != nil {
			opt.LeafRound = spec.Engine.LeafRound
		}
	} else if spec.Engine != nil {
		opt.Search = spec.Engine.SearchKNN
	}
	g, err := graph.KNN(ctx, tab.Features, tab.N, tab.P, opt)
	if err != nil {
		return nil, err
	}
	b.knn = opt
	b.Checksum = crc32.Update(crc32.Checksum(store.AsBytes(tab.Features), castagnoli), castagnoli,
		fmt.Appendf(nil, "knn %d %v %v", opt.Neighbors, opt.Weights, opt.Method))
	return b.useGraph(g, spec)
}

// startBandwidth sets the bandwidth of a k-means start from the features.
func (b *Built) startBandwidth(tab *store.Table, spec Spec) error {
	if err := b.bandwidth(tab, spec); err != nil {
		return err
	}
	b.GammaRule = "for the k-means start " + b.GammaRule
	return nil
}

// useGraph makes the graph g P, its passes on spec.Workers goroutines.
func (b *Built) useGraph(g *graph.CSR, spec Spec) (*Built, error) {
	g.Workers, g.Kernel = spec.Workers, spec.Kernel
	b.graph, b.Affinity = g, g
	n, sum := float64(g.N()), g.Sum()
	switch {
	case spec.Scale > 0:
		b.Scale, b.ScaleRule = spec.Scale, "given"
	case spec.Clusters < 2:
		b.Scale, b.ScaleRule = 1, "as stored (no mass rule for k < 2)"
	default:
		b.Scale = n * n / (float64(spec.Clusters) * sum)
		b.ScaleRule = fmt.Sprintf("mass: n²/(k·ΣP) = %.4g, the mass of %d balanced clusters", b.Scale, spec.Clusters)
	}
	if err := checkSum(g, b.Scale, spec); err != nil {
		g.Close()
		return nil, err
	}
	g.Scale = b.Scale
	b.BlockSize = min(b.BlockSize, g.N())
	return b, nil
}

// ScaleToSizes rescales a sparse P so that its entries sum to Σ_j n_j²,
// the mass of hard clusters of the given sizes (the mass rule's n²/k is the
// case of k equal sizes); rule says where the sizes come from, for
// ScaleRule. P must not be in a pass. It fails for a dense P, whose scale
// is its bandwidth's (GammaRule Mass), and leaves P as it is for an empty
// graph.
func (b *Built) ScaleToSizes(sizes []int, rule string) error {
	if b.graph == nil {
		return errors.New("affinity: a scale from cluster sizes needs a sparse P (a kNN graph or an edge list)")
	}
	var mass float64
	for _, s := range sizes {
		mass += float64(s) * float64(s)
	}
	sum := b.graph.Sum()
	if sum == 0 || mass == 0 {
		return nil
	}
	scale := mass / sum
	if !(scale > 0) || math.IsInf(scale, 0) {
		return fmt.Errorf("affinity: the graph's scale %v is out of range", scale)
	}
	b.Scale, b.graph.Scale = scale, scale
	b.ScaleRule = fmt.Sprintf("sizes: Σn_j²/ΣP = %.4g, the mass of the %d clusters of %s", scale, len(sizes), rule)
	return nil
}

// MultiplyScale multiplies a sparse P's factor by f > 0 (-scale RULE:F),
// after its rule set it, and says so in ScaleRule. P must not be in a
// pass. It fails for a dense P, whose scale is its bandwidth's.
func (b *Built) MultiplyScale(f float64) error {
	if b.graph == nil {
		return errors.New("affinity: a multiple of the scale rule needs a sparse P (a kNN graph or an edge list)")
	}
	scale := b.Scale * f
	if !(f > 0) || !(scale > 0) || math.IsInf(scale, 0) {
		return fmt.Errorf("affinity: %v times the scale %v is out of range", f, b.Scale)
	}
	if err := checkSum(b.graph, scale, Spec{Scale: scale}); err != nil {
		return err
	}
	b.Scale, b.graph.Scale = scale, scale
	b.ScaleRule = fmt.Sprintf("%g × (%s) = %.4g", f, b.ScaleRule, scale)
	return nil
}

// bandwidth sets the Gaussian bandwidth: the one given, or the automatic
// rule's.
func (b *Built) bandwidth(tab *store.Table, spec Spec) error {
	if spec.Gamma > 0 {
		b.Gamma, b.GammaRule = spec.Gamma, "given"
		return nil
	}
	var bw tile.Bandwidth
	var err error
	switch spec.GammaRule {
	case Neighbor:
		bw, err = tile.AutoBandwidth(tab.Features, tab.N, tab.P, spec.Seed)
	case Mass:
		bw, err = tile.MassBandwidth(tab.Features, tab.N, tab.P, spec.Clusters, spec.Seed)
	default:
		err = fmt.Errorf("unknown bandwidth rule %v", spec.GammaRule)
	}
	if err != nil {
		return &BandwidthError{Name: spec.Name, Err: err}
	}
	b.Gamma, b.GammaRule = bw.Gamma, bw.Rule
	return nil
}

// BandwidthError reports that the automatic bandwidth rule failed on the
// features of the input Name (for example, features so spread out that no
// distance is finite).
type BandwidthError struct {
	Name string
	Err  error
}

func (e *BandwidthError) Error() string { return e.Name + ": " + e.Err.Error() }
func (e *BandwidthError) Unwrap() error { return e.Err }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Describe says what P is, for a progress line.
func (b *Built) Describe() string {
	if g := b.graph; g != nil && b.edges {
		return fmt.Sprintf("P from edge list (%d rows, %d entries, scale %.4g)", g.N(), g.NNZ(), b.Scale)
	}
	if g := b.graph; g != nil {
		m := b.knn.Neighbors
		if m == 0 {
			m = graph.DefaultNeighbors
		}
		neighbours := fmt.Sprintf("%d neighbours", m)
		if m > g.N() {
			neighbours = fmt.Sprintf("%d neighbours, clamped from %d to the number of rows", g.N(), m)
		}
		return fmt.Sprintf("p=%d kNN graph (%s, %v weights, %s, %d entries, scale %.4g)", b.p, neighbours, b.knn.Weights, b.DescribeSearch(), g.NNZ(), b.Scale)
	}
	if f := b.file; f != nil {
		prec := "float64"
		if f.Float32() {
			prec = "float32"
		}
		return fmt.Sprintf("P from tile file (block %d, %s)", f.Block(), prec)
	}
	return fmt.Sprintf("p=%d gamma=%.6g (%s)", b.p, b.Gamma, b.GammaRule)
}

// DescribeSearch says how the kNN graph's neighbours were found: "exact
// search", or "approximate search, recall@M R on S sampled rows".
func (b *Built) DescribeSearch() string {
	st := b.KNN
	switch {
	case st.Method != graph.Approximate:
		return "exact search"
	case st.Reused:
		return "approximate search (reused)"
	case st.RecallRows == 0:
		return fmt.Sprintf("approximate search, %d rounds, recall not measured", len(st.Rounds))
	}
	return fmt.Sprintf("approximate search, recall %.4f on %d sampled rows", st.Recall, st.RecallRows)
}

// Kernel names what computes P's passes: the tile kernel, or the sparse
// P's (graph.CSR.KernelName, as "avx512/csr").
func (b *Built) Kernel() string {
	if b.Engine == nil {
		return b.graph.KernelName()
	}
	return b.Engine.Kernel()
}

// Entries returns the entries of P that a pass reads: n² for a dense P (the
// upper triangle is computed, but all are counted), the stored ones of a
// graph.
func (b *Built) Entries() float64 {
	if b.graph != nil {
		return float64(b.graph.NNZ())
	}
	return float64(b.N()) * float64(b.N())
}

// Weights returns the weights of a kNN graph built from the features
// (graph.Connectivity for any other P).
func (b *Built) Weights() graph.Weights { return b.knn.Weights }

// FromFile reports whether P is read from a file: a tile file or an edge
// list.
func (b *Built) FromFile() bool { return b.file != nil || b.edges }

// Graph returns P if it is a sparse graph, else nil.
func (b *Built) Graph() *graph.CSR { return b.graph }

// Close releases a tile file or a graph's CSR file.
func (b *Built) Close() error {
	if b.file != nil {
		return b.file.Close()
	}
	if b.graph != nil {
		return b.graph.Close()
	}
	return nil
}
