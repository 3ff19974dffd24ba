package spectral

import (
	"context"
	"fmt"
	"math"

	"github.com/ssnmf/ssnmf/kmeans"
	"github.com/ssnmf/ssnmf/tile"
)

// StartSweeps is the sweeps of the approximate embedding of a spectral
// start (Options.Sweeps): k-means of its rows needs the leading subspace
// to the accuracy that separates the clusters, which the coarse graphs'
// embedding and one sweep give (studies/spectral, "The multilevel start").
const StartSweeps = 1

// Eigengap returns the relative eigengap (1 - λ_{k+1}) / (1 - λ_k) of
// the K+1 leading eigenvalues of D^-½PD^-½, descending, of a graph of the
// given connected components (rows of degree 0 apart; 0 if not known):
// large when the graph has k nearly separate parts; NaN without k+1
// eigenvalues. The leading eigenvalues, one a component, are 1 exactly,
// and an eigenvalue within EigenOne of 1 counts as 1 too: +Inf for k
// components, 1 for more.
func Eigengap(values []float64, k, components int) float64 {
	if len(values) < k+1 || k < 1 {
		return math.NaN()
	}
	gap := func(j int) float64 {
		if j < components || 1-values[j] < EigenOne {
			return 0
		}
		return 1 - values[j]
	}
	below, next := gap(k-1), gap(k)
	if below == 0 && next == 0 {
		return 1
	}
	return next / below
}

// EigenOne is how close to 1 an eigenvalue counts as 1 in Eigengap: 1 - λ
// below 10⁻⁶ is a part of the graph joined to the rest by a millionth of
// its weight, separate in all but name. The approximate embedding of a
// start has such Ritz values only roughly (shuttle, 7 components: its
// 8th Ritz value 1.1·10⁻⁹ below 1, where LOBPCG to 10⁻⁶ has it within
// 10⁻¹⁰); on the 60 sets of the study, 10⁻⁸ to 10⁻⁵ give the same
// picks of Init auto, and 10⁻⁹ differs on shuttle alone
// (studies/spectral/README.md).
const EigenOne = 1e-6

// normalizeRows scales each row of v (n×k, row-major) to unit length: the
// points that Ng, Jordan and Weiss cluster by k-means. A row that is 0 (a
// row of degree 0) stays 0.
func normalizeRows(v []float64, k int) {
	for i := 0; i < len(v); i += k {
		row := v[i : i+k]
		var sq float64
		for _, x := range row {
			sq += x * x
		}
		if sq == 0 {
			continue
		}
		norm := math.Sqrt(sq)
		for c, x := range row {
			row[c] = x / norm
		}
	}
}

// Start is the spectral start of a run: the normalised rows of the
// embedding and the bandwidth of their k-means clusters' soft
// memberships.
type Start struct {
	Rows []float64 // n×K: the embedding's rows normalised to unit length
	K    int
	// Beta is the bandwidth of the soft memberships: the neighbour rule
	// (tile.AutoBandwidth) on the normalised rows, the rule whose
	// bandwidth the k-means start of the features takes in feature space.
	Beta float64
}

// NewStart returns the spectral start of the embedding e; seed draws the
// rows that measure the bandwidth. It takes e's vectors: it normalises
// their rows in place, and they are the start's Rows after.
func NewStart(e *Embedding, seed uint64) (*Start, error) {
	rows := e.Vectors
	normalizeRows(rows, e.K)
	bw, err := tile.AutoBandwidth(rows, e.N, e.K, seed)
	if err != nil {
		return nil, fmt.Errorf("spectral: the bandwidth of the embedding's rows: %w", err)
	}
	return &Start{Rows: rows, K: e.K, Beta: bw.Gamma}, nil
}

// Memberships clusters the rows by k-means with the settings s and writes
// into w (n×k, row-major) the clusters' soft memberships,
// w_ij ∝ exp(-Beta ||y_i - c_j||²) (kmeans.Result.Soft), as the k-means
// start of the features does in feature space. It returns the clustering.
func (st *Start) Memberships(ctx context.Context, w []float64, k int, s kmeans.Settings) (*kmeans.Result, error) {
	n := len(st.Rows) / st.K
	km, err := kmeans.Cluster(ctx, st.Rows, n, st.K, k, s)
	if err != nil {
		return nil, fmt.Errorf("spectral: k-means of the embedding: %w", err)
	}
	return km, km.Soft(w, st.Rows, st.Beta)
}

// Bytes returns about the most bytes Embed and NewStart hold at once
// with the options opt for a graph of n rows and nnz entries. On the
// heap: the rows' degrees, and either the cells of each level (a coarse
// start, see coarse.go), the components' union-find and the last level's dense solve, or
// later the embedding, whose rows NewStart normalises in place. In
// opt.Scratch (on the heap too if it is nil): the block vectors (9 blocks
// of n×b float64 for LOBPCG, 5 with Sweeps) and the coarse graphs'
// entries. A coarse start is made before all but the first block: it
// holds that block and the coarse graphs, the first bounded by P's
// entries (12 bytes each) and the levels below by an eighth of its rows.
func Bytes(n, nnz int64, opt Options) (heap, scratch int64) {
	b := min(int64(cmpOr(opt.Block, opt.K+1+DefaultGuard)), n)
	blocks := int64(9)
	if opt.Sweeps > 0 {
		blocks = 5
	}
	heap = 2*n*8 + max(4*n, n*int64(opt.K)*8)
	scratch = blocks * n * b * 8
	if opt.Sweeps > 0 || opt.CellRows > 0 {
		// The rows' least strong weights, the cells' labels, members and
		// seeds, at each level, the rows without a cell and their edges'
		// counts, the workers' gathered entries (20 bytes an entry at
		// most), and the dense solve at the last; the first block, the
		// first coarse graph (or before it the edges of the rows without
		// a cell) and the levels' blocks below.
		gathered := int64(max(opt.Workers, 1)) * gatherEntries * 20
		heap = max(heap, 2*n*8+4*n+40*n+(n/8)*40+gathered+4*denseRows*denseRows*8)
		scratch = max(scratch, n*b*8+nnz*12+(n/8)*blocks*b*8)
	}
	return heap, scratch
}
