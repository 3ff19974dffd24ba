package solver

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store"
)

// TestStartsRun checks the starts loop: the least objective is kept, ties
// to the lower start; a time limit ends the starts and marks the answer; a
// stop or an error ends the run at once; a resumed run compares with the
// best start that had ended.
func TestStartsRun(t *testing.T) {
	r := func(f float64, st fw.Status) *fw.Result { return &fw.Result{Objective: f, Status: st} }
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		n       int
		first   int
		best    *fw.Result
		results []*fw.Result // of starts first, first+1, ...
		err     error
		want    float64
		status  fw.Status
		kept    []int // the starts KeepBest was called with
		ran     int
	}{
		{"least kept, ties to the lower", 4, 0, nil, []*fw.Result{r(3, fw.GapTolerance), r(2, fw.GapTolerance), r(2, fw.GapTolerance), r(5, fw.GapTolerance)}, nil, 2, fw.GapTolerance, []int{0, 1}, 4},
		{"one start: its own result", 1, 0, nil, []*fw.Result{r(7, fw.IterationLimit)}, nil, 7, fw.IterationLimit, nil, 1},
		{"time limit ends the starts", 3, 0, nil, []*fw.Result{r(3, fw.GapTolerance), r(4, fw.TimeLimit), r(1, fw.GapTolerance)}, nil, 3, fw.TimeLimit, []int{0}, 2},
		{"stopped", 3, 0, nil, []*fw.Result{r(3, fw.GapTolerance), r(4, fw.Stopped)}, nil, 4, fw.Stopped, []int{0}, 2},
		{"error", 3, 0, nil, []*fw.Result{r(3, fw.GapTolerance), nil}, boom, 0, 0, []int{0}, 2},
		{"resumed: the ended best compared", 3, 1, r(1, fw.GapTolerance), []*fw.Result{r(3, fw.GapTolerance), r(0.5, fw.GapTolerance)}, nil, 0.5, fw.GapTolerance, []int{2}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var kept []int
			ran := 0
			st := &Starts{N: tc.n, First: tc.first, Best: tc.best,
				Start: func(_ context.Context, s int, _ uint64) (*fw.Result, error) {
					res := tc.results[ran]
					ran++
					if res == nil {
						return nil, boom
					}
					return res, nil
				},
				Ended:    func(int, uint64, *fw.Result) {},
				KeepBest: func(s int, _ *fw.Result) error { kept = append(kept, s); return nil }}
			res, err := st.Run(context.Background())
			if !errors.Is(err, tc.err) || ran != tc.ran || !slices.Equal(kept, tc.kept) {
				t.Fatalf("err %v, ran %d, kept %v: want %v, %d, %v", err, ran, kept, tc.err, tc.ran, tc.kept)
			}
			if err == nil && (res.Objective != tc.want || res.Status != tc.status) {
				t.Errorf("result %v %v, want %v %v", res.Objective, res.Status, tc.want, tc.status)
			}
		})
	}
}

// ParseScale reads a factor, a rule, and a rule's multiple, and refuses
// what is none of them.
func TestParseScale(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Scale
		err  bool
	}{
		{"3.5", Scale{Factor: 3.5}, false}, {"mass", Scale{Rule: ScaleMass}, false}, {"auto:1.5", Scale{Rule: ScaleAuto, Times: 1.5}, false},
		{"0", Scale{}, true}, {"equal", Scale{}, true}, {"sizes:0", Scale{}, true}, {"2:3", Scale{}, true}, {"Inf", Scale{}, true},
	} {
		got, err := ParseScale(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseScale(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// Clusters takes K as given, else the label column's classes, and says
// when there are none to take.
func TestClusters(t *testing.T) {
	labeled := &store.Table{N: 4, Labels: []int{0, 1, 2, 0}, Classes: []string{"a", "b", "c"}}
	for _, tc := range []struct {
		k    int
		tab  *store.Table
		want int
		err  error
	}{
		{5, nil, 5, nil}, {0, labeled, 3, nil}, {2, labeled, 2, nil}, {0, &store.Table{N: 4}, 0, ErrNoLabels}, {0, nil, 0, ErrNoLabels},
	} {
		if got, err := (Options{K: tc.k}).Clusters(tc.tab); got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("K %d: Clusters = %d, %v; want %d, %v", tc.k, got, err, tc.want, tc.err)
		}
	}
}
