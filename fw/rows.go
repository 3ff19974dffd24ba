package fw

import (
	"context"

	"github.com/ssnmf/ssnmf/internal/ordered"
)

// chunkRows is the number of rows of a task in a row pass. It is fixed, not
// derived from the worker count, so that reductions add the same partial
// sums in the same order whatever the number of workers.
const chunkRows = 1024

// rowPass runs fn over the rows of an n-row matrix in chunks on workers
// goroutines; fn accumulates into its own buffer, which commit folds into the
// total in chunk order.
func rowPass[B any](ctx context.Context, workers, n int, newBuf func() B,
	fn func(lo, hi int, b B), commit func(b B)) error {
	tasks := (n + chunkRows - 1) / chunkRows
	return ordered.Run(ctx, workers, tasks, newBuf,
		func(_ context.Context, t int, b B) error {
			fn(t*chunkRows, min(n, (t+1)*chunkRows), b)
			return nil
		},
		func(_ int, b B) error {
			commit(b)
			return nil
		})
}

// gram returns WᵀW (k×k, row-major) of the n×k matrix w.
func gram(ctx context.Context, workers int, w []float64, n, k int) ([]float64, error) {
	a := make([]float64, k*k)
	err := rowPass(ctx, workers, n,
		func() []float64 { return make([]float64, k*k) },
		func(lo, hi int, b []float64) {
			clear(b)
			for i := lo; i < hi; i++ {
				wi := w[i*k : (i+1)*k]
				for r, v := range wi {
					if v == 0 {
						continue
					}
					axpy(b[r*k:(r+1)*k], v, wi)
				}
			}
		},
		func(b []float64) { addTo(a, b) })
	return a, err
}

// lmoSums are the sums over rows that one LMO pass produces.
type lmoSums struct {
	wpw    float64   // <W, PW>
	gw     float64   // <G, W>
	gmin   float64   // sum_i min_j G_ij
	ws     []float64 // WᵀS, k×k: ws[a][c] = sum of W[i][a] over the i with s_i = c
	counts []float64 // SᵀS = diag(counts): rows per vertex
	g      []float64 // scratch gradient row
}

func newLMOSums(k int) *lmoSums {
	return &lmoSums{ws: make([]float64, k*k), counts: make([]float64, k), g: make([]float64, k)}
}

func (s *lmoSums) reset() {
	s.wpw, s.gw, s.gmin = 0, 0, 0
	clear(s.ws)
	clear(s.counts)
}

func (s *lmoSums) add(o *lmoSums) {
	s.wpw += o.wpw
	s.gw += o.gw
	s.gmin += o.gmin
	addTo(s.ws, o.ws)
	addTo(s.counts, o.counts)
}

// lmoRows forms the gradient rows g_i = w_i A - (PW)_i of rows lo:hi, picks
// s_i = argmin_j g_ij (the lowest index on ties) and accumulates the sums.
func lmoRows(lo, hi, k int, w, pw, a []float64, s []int32, acc *lmoSums) {
	g := acc.g
	for i := lo; i < hi; i++ {
		wi := w[i*k : (i+1)*k]
		pwi := pw[i*k : (i+1)*k]
		gradRow(g, wi, pwi, a)
		best := 0
		for j, v := range g {
			if v < g[best] {
				best = j
			}
		}
		s[i] = int32(best)
		acc.gmin += g[best]
		acc.gw += dot(g, wi)
		acc.wpw += dot(wi, pwi)
		acc.counts[best]++
		for r, v := range wi {
			acc.ws[r*k+best] += v
		}
	}
}

// gradRow sets g = w_i (WᵀW) - (P W)_i, row i of the gradient; a is WᵀW.
func gradRow(g, wi, pwi, a []float64) {
	for j := range g {
		g[j] = -pwi[j]
	}
	k := len(g)
	for r, v := range wi {
		if v != 0 {
			axpy(g, v, a[r*k:(r+1)*k]) // WᵀW is symmetric: row r = column r
		}
	}
}

// normalizeRows rescales every row of the n×k matrix w to sum 1, removing
// the drift that carried updates leave in the row sums.
func normalizeRows(ctx context.Context, workers int, w []float64, n, k int) error {
	return rowPass(ctx, workers, n, func() struct{} { return struct{}{} },
		func(lo, hi int, _ struct{}) {
			for i := lo; i < hi; i++ {
				wi := w[i*k : (i+1)*k]
				var sum float64
				for _, v := range wi {
					sum += v
				}
				for j := range wi {
					wi[j] /= sum
				}
			}
		}, func(struct{}) {})
}

// axpy sets y += a·x. Each product is rounded (an explicit float64
// conversion) before it is added, so that no architecture fuses the two
// into one multiply-add: y has the same bits on arm64 as on amd64, and as
// graph.CSR's products.
func axpy(y []float64, a float64, x []float64) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] += float64(a * v)
	}
}

// dot returns x·y, summed in order, its products rounded as axpy's are.
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s float64
	for i, v := range x {
		s += float64(v * y[i])
	}
	return s
}

func addTo(dst, src []float64) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] += v
	}
}
