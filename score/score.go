package score

import (
	"fmt"
	"math"
)

// maxAssign is the largest number of classes or clusters that Accuracy
// accepts. The matching step needs m² memory and m³ time for m labels; at
// this limit that is 128 MiB and on the order of a minute.
const maxAssign = 1 << 12

// comb2 returns x choose 2, computed in float64 so that it cannot overflow.
func comb2(x int) float64 {
	f := float64(x)
	return float64(f * (f - 1) / 2) // rounded: not fused into the caller's sum
}

// ARI returns the adjusted Rand index of pred against truth (Hubert & Arabie
// 1985).
//
// The Rand index is the fraction of pairs of points on which the two
// partitions agree, that is, pairs placed together in both or apart in both.
// The adjusted index rescales it so that identical partitions score 1 and the
// expected score of random partitions with the same cluster sizes is 0:
//
//	ARI = (Σ_ij C(n_ij,2) − E) / ((Σ_i C(a_i,2) + Σ_j C(b_j,2))/2 − E),
//	E   = Σ_i C(a_i,2) · Σ_j C(b_j,2) / C(n,2),
//
// where n_ij is the contingency table and a_i, b_j are its row and column
// sums. The result lies in [−1, 1] (in practice above −0.5).
//
// The formula is 0/0 exactly when both partitions consist of a single
// cluster, or both place every point in a cluster of its own (which includes
// n = 1). Following scikit-learn, ARI returns 1 in these cases, as the two
// partitions are then identical.
//
// ARI returns an error if the slices differ in length, are empty, or contain
// a negative label.
func ARI(truth, pred []int) (float64, error) {
	t, err := newContingency(truth, pred, defaultMaxDense(len(truth)))
	if err != nil {
		return 0, err
	}
	return t.ari(), nil
}

func (t *contingency) ari() float64 {
	if (t.rows == 1 && t.cols == 1) || (t.rows == t.n && t.cols == t.n) {
		return 1
	}
	var index float64
	t.each(func(_, _, nij int) { index += comb2(nij) })
	var sumRows, sumCols float64
	for _, a := range t.rowSum {
		sumRows += comb2(a)
	}
	for _, b := range t.colSum {
		sumCols += comb2(b)
	}
	expected := float64(sumRows * sumCols / comb2(t.n))
	maxIndex := float64((sumRows + sumCols) / 2)
	return (index - expected) / (maxIndex - expected)
}

// NMI returns normalized mutual information with arithmetic-mean
// normalization, NMI = I(T;C) / ((H(T)+H(C))/2), as scikit-learn's
// normalized_mutual_info_score default.
//
// T and C are the class and cluster of a point drawn uniformly at random, H
// is the Shannon entropy and I the mutual information; the choice of
// logarithm base cancels. The result lies in [0, 1]; it is clamped to that
// interval to absorb rounding error.
//
// When both partitions consist of a single cluster, both entropies are zero
// and the ratio is 0/0; following scikit-learn, NMI returns 1, as the
// partitions are identical. When exactly one partition consists of a single
// cluster, the mutual information is zero and NMI returns 0.
//
// NMI returns an error if the slices differ in length, are empty, or contain
// a negative label.
func NMI(truth, pred []int) (float64, error) {
	t, err := newContingency(truth, pred, defaultMaxDense(len(truth)))
	if err != nil {
		return 0, err
	}
	return t.nmi(), nil
}

// entropy returns the Shannon entropy, in nats, of the distribution with the
// given counts summing to n.
func entropy(counts []int, n float64) float64 {
	var s float64
	for _, c := range counts {
		f := float64(c)
		s += float64(f * math.Log(f))
	}
	return math.Log(n) - s/n
}

func (t *contingency) nmi() float64 {
	if t.rows == 1 && t.cols == 1 {
		return 1
	}
	if t.rows == 1 || t.cols == 1 {
		return 0
	}
	n := float64(t.n)
	logN := math.Log(n)
	logRow := make([]float64, t.rows)
	for i, a := range t.rowSum {
		logRow[i] = math.Log(float64(a))
	}
	logCol := make([]float64, t.cols)
	for j, b := range t.colSum {
		logCol[j] = math.Log(float64(b))
	}
	// I(T;C) = Σ_ij (n_ij/n) log(n·n_ij / (a_i·b_j)).
	var mi float64
	t.each(func(i, j, nij int) {
		f := float64(nij)
		mi += float64(f * (math.Log(f) + logN - logRow[i] - logCol[j]))
	})
	mi /= n
	if mi <= 0 {
		return 0
	}
	hT := entropy(t.rowSum, n)
	hC := entropy(t.colSum, n)
	return min(mi/((hT+hC)/2), 1)
}

// Accuracy returns the fraction of points whose cluster maps to their class
// under the best one-to-one matching of clusters to classes (Hungarian
// algorithm on the contingency table; clusters and classes may differ in
// number; unmatched clusters count as wrong).
//
// When there are more clusters than classes, the points of the clusters left
// unmatched are counted as misclassified; when there are fewer, the points of
// the classes left unmatched are. Identical partitions, including two
// single-cluster partitions, score 1.
//
// Accuracy returns an error if the slices differ in length, are empty, or
// contain a negative label, or if the number of classes or of clusters
// exceeds 4096, beyond which the O(m³) matching step becomes impractical.
func Accuracy(truth, pred []int) (float64, error) {
	t, err := newContingency(truth, pred, defaultMaxDense(len(truth)))
	if err != nil {
		return 0, err
	}
	return t.accuracy()
}

func (t *contingency) accuracy() (float64, error) {
	if m := max(t.rows, t.cols); m > maxAssign {
		return 0, fmt.Errorf("score: Accuracy: %d classes and %d clusters exceed the limit of %d for the matching step", t.rows, t.cols, maxAssign)
	}
	w := make([]int64, t.rows*t.cols)
	t.each(func(i, j, nij int) { w[i*t.cols+j] = int64(nij) })
	matched, _ := maxMatch(w, t.rows, t.cols)
	return float64(matched) / float64(t.n), nil
}

// Scores are the three measures of one clustering against the classes.
type Scores struct {
	ARI      float64 // adjusted Rand index, as returned by [ARI]
	NMI      float64 // normalized mutual information, as returned by [NMI]
	Accuracy float64 // best one-to-one matching accuracy, as returned by [Accuracy]
}

// Compare returns the adjusted Rand index, the normalized mutual information
// and the accuracy of pred against truth, each exactly as [ARI], [NMI] and
// [Accuracy] return it, from a single contingency table.
//
// Compare returns an error, and zero Scores, in the cases where [Accuracy]
// does: the slices differ in length, are empty or contain a negative label,
// or there are more than 4096 classes or clusters.
func Compare(truth, pred []int) (Scores, error) {
	t, err := newContingency(truth, pred, defaultMaxDense(len(truth)))
	if err != nil {
		return Scores{}, err
	}
	acc, err := t.accuracy()
	if err != nil {
		return Scores{}, err
	}
	return Scores{ARI: t.ari(), NMI: t.nmi(), Accuracy: acc}, nil
}
