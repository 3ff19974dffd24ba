package score

import (
	"fmt"
	"math"
)

// Calibration measures how well soft memberships agree with the classes
// once the clusters are matched to them: whether a point's membership in
// its cluster says how likely the point is to be clustered right.
type Calibration struct {
	// ConfidentCorrect and ConfidentWrong are the mean largest membership
	// of the points whose cluster is (is not) the one matched to their
	// class; NaN if there are no such points. Calibrated memberships give
	// the first a clearly larger value.
	ConfidentCorrect, ConfidentWrong float64
	// Correct is the number of points clustered right.
	Correct int
	// Brier is the mean over the points of Σ_j (w_ij - y_ij)², where y_i
	// is one-hot on the cluster matched to the class of point i (all zero
	// if its class is matched to none): 0 for certain and right
	// memberships, 2 for certain and wrong ones.
	Brier float64
}

// Calibrate returns the calibration of the memberships w (n×k, row-major,
// rows on the simplex) against the classes truth. A point's cluster is its
// largest membership (the first, in a tie), and the clusters are matched to
// the classes one to one so that the most points are clustered right, as
// [Accuracy] matches them.
//
// It returns an error if w is not n×k, truth is empty or has a negative
// label, or there are more than 4096 classes or clusters.
func Calibrate(truth []int, w []float64, k int) (Calibration, error) {
	n := len(truth)
	if n == 0 || k < 1 || len(w) != n*k {
		return Calibration{}, fmt.Errorf("score: Calibrate: %d memberships for %d points and k = %d", len(w), n, k)
	}
	ix, err := newIndexer(truth, "truth")
	if err != nil {
		return Calibration{}, err
	}
	classes := len(ix.counts)
	if m := max(classes, k); m > maxAssign {
		return Calibration{}, fmt.Errorf("score: Calibrate: %d classes and %d clusters exceed the limit of %d for the matching step", classes, k, maxAssign)
	}
	pred := make([]int, n)
	counts := make([]int64, classes*k)
	for i := range n {
		pred[i] = argmax(w[i*k : (i+1)*k])
		counts[ix.index(truth[i])*k+pred[i]]++
	}
	_, match := maxMatch(counts, classes, k)
	var c Calibration
	var right, wrong, brier float64
	for i := range n {
		row := w[i*k : (i+1)*k]
		want := match[ix.index(truth[i])]
		for j, v := range row {
			if j == want {
				v--
			}
			brier += float64(v * v)
		}
		if pred[i] == want {
			c.Correct++
			right += row[pred[i]]
		} else {
			wrong += row[pred[i]]
		}
	}
	c.ConfidentCorrect, c.ConfidentWrong = math.NaN(), math.NaN()
	if c.Correct > 0 {
		c.ConfidentCorrect = right / float64(c.Correct)
	}
	if c.Correct < n {
		c.ConfidentWrong = wrong / float64(n-c.Correct)
	}
	c.Brier = brier / float64(n)
	return c, nil
}

// argmax returns the index of the largest value of row, the first in a tie.
func argmax(row []float64) int {
	best := 0
	for j, v := range row {
		if v > row[best] {
			best = j
		}
	}
	return best
}
