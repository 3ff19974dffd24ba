package graph

import (
	"math"
	"slices"

	"github.com/ssnmf/ssnmf/internal/negexp"
)

// best is the M best candidates of each of a set of rows, by (d², index),
// each row's sorted ascending.
type best struct {
	m   int
	d   []float64 // squared distances, m a row
	j   []int32   // their rows
	cnt []int32   // candidates held, at most m
}

func newBest(rows, m int) *best {
	return &best{m: m, d: make([]float64, rows*m), j: make([]int32, rows*m), cnt: make([]int32, rows)}
}

func (b *best) reset(rows int) { clear(b.cnt[:rows]) }

// bound returns the distance of row r's m-th candidate, +Inf if it has
// fewer.
func (b *best) bound(r int) float64 {
	if int(b.cnt[r]) < b.m {
		return math.Inf(1)
	}
	return b.d[r*b.m+b.m-1]
}

// offer makes (d, j) a candidate of row r if it is among the best m, and
// reports whether it did.
func (b *best) offer(r int, d float64, j int32) bool {
	m, c := b.m, int(b.cnt[r])
	ds, js := b.d[r*m:r*m+m], b.j[r*m:r*m+m]
	if c == m && !less(d, j, ds[m-1], js[m-1]) {
		return false
	}
	pos, hi := 0, c // the first candidate after (d, j)
	for pos < hi {
		if h := int(uint(pos+hi) >> 1); less(d, j, ds[h], js[h]) {
			hi = h
		} else {
			pos = h + 1
		}
	}
	if c < m {
		c++
		b.cnt[r] = int32(c)
	}
	copy(ds[pos+1:c], ds[pos:c-1])
	copy(js[pos+1:c], js[pos:c-1])
	ds[pos], js[pos] = d, j
	return true
}

// less orders candidates by distance, then by row: a strict total order, so
// that the best m do not depend on the order of the offers.
func less(d1 float64, j1 int32, d2 float64, j2 int32) bool {
	return d1 < d2 || d1 == d2 && j1 < j2
}

// graph symmetrizes the neighbour lists into P = W ∘ (C + Cᵀ)/2, in memory
// or in the CSR file path, tagged source.
func (b *best) graph(w Weights, path string, source uint64) (*CSR, error) {
	n, m := len(b.cnt), b.m
	weight := func(i, e int) float64 { return 1 }
	if w == SelfTuning {
		sigma := b.sigmas()
		weight = func(i, e int) float64 {
			j, d := int(b.j[i*m+e]), max(b.d[i*m+e], 0)
			return negexp.Of(d / (sigma[i] * sigma[j]))
		}
	}
	// Every edge of C once from each end: row i gets (j, w/2) for its own
	// neighbours j and for every row j that has i as a neighbour; the two
	// halves of a mutual edge add up.
	count := make([]int64, n)
	for i := range n {
		count[i] += int64(b.cnt[i])
		for e := range int(b.cnt[i]) {
			count[b.j[i*m+e]]++
		}
	}
	es, err := newEntries(count, path, source)
	if err != nil {
		return nil, err
	}
	for i := range n {
		for e := range int(b.cnt[i]) {
			j, v := b.j[i*m+e], weight(i, e)/2
			es.put(i, j, v)
			es.put(int(j), int32(i), v)
		}
	}
	return es.csr(func(_ int, _ int32, a, b float64) (float64, error) { return a + b, nil })
}

// sigmas returns the self-tuning scales: the distance of each row to its
// SigmaNeighbor-th nearest other row, floored.
func (b *best) sigmas() []float64 {
	n, m := len(b.cnt), b.m
	sigma := make([]float64, n)
	var pos []float64
	for i := range n {
		e := min(SigmaNeighbor, int(b.cnt[i])-1) // entry 0 is the row itself
		sigma[i] = math.Sqrt(max(b.d[i*m+e], 0))
		if sigma[i] > 0 {
			pos = append(pos, sigma[i])
		}
	}
	floor := 1.0
	if len(pos) > 0 {
		slices.Sort(pos)
		floor = 1e-3 * pos[len(pos)/2]
	}
	for i, s := range sigma {
		sigma[i] = max(s, floor)
	}
	return sigma
}

// KNNPart is one task's share of a kNN build: the neighbour lists of the
