package fw

import (
	"context"

	"github.com/ssnmf/ssnmf/kmeans"
)

// KMeans is the k-means baseline as a Method: Init clusters the feature
// rows by k-means (package kmeans) and sets W to the one-hot memberships
// (or, with Beta > 0, the soft memberships of bandwidth Beta),
// which it evaluates by one P·W pass, so that its objective and gap can be
// compared with the other methods'. It takes no iteration: the run stops
// at that point, on the gap if it is small enough, else with
// IterationLimit.
type KMeans struct {
	// X holds the n×Dim feature rows, row-major.
	X   []float64
	Dim int
	// Settings control the k-means run (its starts, seed, Lloyd
	// iterations and workers).
	Settings kmeans.Settings
	// Beta, if > 0, makes W the soft memberships of the clusters,
	// kmeans.Result.Soft with this bandwidth, instead of the one-hot ones.
	Beta float64

	run    *Run
	sel    []int32
	cur    point
	result *kmeans.Result
}

// Init runs k-means, sets W to its memberships and evaluates them.
func (m *KMeans) Init(ctx context.Context, r *Run) error {
	km, err := kmeans.Cluster(ctx, m.X, r.N, m.Dim, r.K, m.Settings)
	if err != nil {
		return err
	}
	if m.Beta > 0 {
		err = km.Soft(r.W, m.X, m.Beta)
	} else {
		err = km.OneHot(r.W)
	}
	if err != nil {
		return err
	}
	m.run, m.sel, m.result = r, make([]int32, r.N), km
	if err := r.FirstPass(ctx); err != nil {
		return err
	}
	m.cur, err = evaluate(ctx, r.Workers, r.W, r.PW, r.N, r.K, r.FrobSq, m.sel)
	return err
}

// Estimate returns the objective and the exact gap of the clustering.
func (m *KMeans) Estimate() Estimate {
	return Estimate{Objective: m.cur.f, Gap: m.cur.gap, Model: m.cur.model(), Exact: true}
}

// Iterate takes no step.
func (m *KMeans) Iterate(context.Context, *Iteration) (Status, error) { return IterationLimit, nil }

// Refresh does nothing: P·W comes from a pass.
func (m *KMeans) Refresh(context.Context) error { return nil }

// Result returns the k-means run of the last Minimize.
func (m *KMeans) Result() *kmeans.Result { return m.result }
