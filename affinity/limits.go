package affinity

import (
	"fmt"
	"math"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
)

// The rules that keep P's sums finite. A sum that overflows or a scale
// that underflows does not fail in the method: it gives a P of zeros, NaNs
// or infinities and a silently wrong W. So Build refuses such a P up
// front, naming the rule.

// RangeError is the error of a P refused by one of these rules: the input
// is out of the range the rule names, not the program at fault.
type RangeError struct{ Msg string }

func (e *RangeError) Error() string { return e.Msg }

// rangeErrorf returns a *RangeError of the formatted message.
func rangeErrorf(format string, args ...any) error {
	return &RangeError{Msg: fmt.Sprintf(format, args...)}
}

// checkRaw refuses raw (unstandardized) features whose squared distances
// overflow: the kernel and the kNN search both sum them.
func checkRaw(tab *store.Table, name string) error {
	limit := tile.MaxFeature(tab.P)
	for i := range tab.N {
		for q, v := range tab.Features[i*tab.P : (i+1)*tab.P] {
			if math.Abs(v) > limit {
				col := fmt.Sprint(q)
				if q < len(tab.Names) {
					col = store.Quote(tab.Names[q])
				}
				return rangeErrorf("%s: row %d, column %s: %g with -standardize=false: squared distances of %d features overflow above |x| = %.3g; keep -standardize, or rescale the column",
					name, i+1, col, v, tab.P, limit)
			}
		}
	}
	return nil
}

// checkSum refuses a graph whose stored values sum to 0 (P = 0: nothing
// to cluster), to infinity, or to a value whose scale (given, or the
// mass rule's) leaves S·P's squared norm out of a float64's range.
func checkSum(g *graph.CSR, scale float64, spec Spec) error {
	mo := g.Moments()
	sum := mo.Sum
	what := "the kNN graph"
	if spec.File != "" {
		what = spec.File
	}
	switch {
	case sum == 0:
		return rangeErrorf("%s: every weight is 0 (ΣP = 0): P has nothing to cluster", what)
	case math.IsInf(sum, 0):
		return rangeErrorf("%s: the weights sum to more than %.3g (ΣP overflows a float64): divide them by a common factor", what, math.MaxFloat64)
	case math.IsInf(scale, 0) || scale == 0:
		return rangeErrorf("%s: the weights sum to %g, so the mass rule's scale n²/(k·ΣP) is out of a float64's range: multiply them by a common factor, or give -scale", what, sum)
	}
	// Σ(S·v)², as top²·S²·Σ(v/top)² so that no term overflows before the
	// total does (graph.Moments).
	top, frob := mo.Max, mo.Squares
	if f := frob * (scale * top) * (scale * top); math.IsInf(f, 0) || f == 0 {
		given := "the mass rule's scale"
		if spec.Scale > 0 {
			given = "-scale"
		}
		// S·top·√frob must lie within the square root of a float64's range.
		limit, bound := math.Sqrt(math.MaxFloat64)/(top*math.Sqrt(frob)), "at most"
		if f == 0 {
			limit, bound = math.Sqrt(math.SmallestNonzeroFloat64)/(top*math.Sqrt(frob)), "at least"
		}
		return rangeErrorf("%s: %s %g times the largest weight %g puts ||S·P||² out of a float64's range: want a scale %s %.3g",
			what, given, scale, top, bound, limit)
	}
	return nil
}
