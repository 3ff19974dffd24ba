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

// Rows returns the rows of the embedding normalised to unit length, the
// points that Ng, Jordan and Weiss cluster by k-means (n×K, row-major); a
// row that is 0 (a row of degree 0) stays 0.
func (e *Embedding) Rows() []float64 {
	rows := make([]float64, len(e.Vectors))
	for i := range e.N {
		src, dst := e.Vectors[i*e.K:(i+1)*e.K], rows[i*e.K:(i+1)*e.K]
		var sq float64
		for _, v := range src {
			sq += v * v
		}
		if sq == 0 {
			continue
		}
		norm := math.Sqrt(sq)
		for c, v := range src {
			dst[c] = v / norm
		}
	}
	return rows
}

// Start is the spectral start of a run: the normalised rows of the
// embedding and the bandwidth of their k-means clusters' soft
// memberships.
type Start struct {
	Rows []float64 // n×K, Embedding.Rows
	K    int
	// Beta is the bandwidth of the soft memberships: the neighbour rule
	// (tile.AutoBandwidth) on the normalised rows, the rule whose
	// bandwidth the k-means start of the features takes in feature space.
	Beta float64
}

// NewStart returns the spectral start of the embedding e; seed draws the
// rows that measure the bandwidth.
func NewStart(e *Embedding, seed uint64) (*Start, error) {
	rows := e.Rows()
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
