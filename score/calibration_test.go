package score

import (
	"math"
	"testing"
)

func TestCalibrate(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name    string
		truth   []int
		w       []float64 // rows of k = 2
		want    Calibration
		wantErr bool
	}{
		{
			name:  "certain and right, clusters swapped",
			truth: []int{0, 0, 1},
			w:     []float64{0, 1, 0, 1, 1, 0},
			want:  Calibration{ConfidentCorrect: 1, ConfidentWrong: nan, Correct: 3, Brier: 0},
		},
		{
			name:  "one point wrong",
			truth: []int{5, 5, 7, 7},
			w:     []float64{0.9, 0.1, 0.8, 0.2, 0.3, 0.7, 0.6, 0.4},
			// Class 5 -> cluster 0, class 7 -> cluster 1; the last point is wrong.
			want: Calibration{ConfidentCorrect: (0.9 + 0.8 + 0.7) / 3, ConfidentWrong: 0.6, Correct: 3,
				Brier: (2*0.01 + 2*0.04 + 2*0.09 + 2*0.36) / 4},
		},
		{
			name:  "three classes, two clusters: one class unmatched",
			truth: []int{0, 1, 2},
			w:     []float64{1, 0, 0, 1, 0.5, 0.5},
			want:  Calibration{ConfidentCorrect: 1, ConfidentWrong: 0.5, Correct: 2, Brier: 0.5 / 3},
		},
		{name: "short w", truth: []int{0, 1}, w: []float64{1, 0}, wantErr: true},
		{name: "negative label", truth: []int{0, -1}, w: []float64{1, 0, 0, 1}, wantErr: true},
		{name: "empty", truth: nil, w: nil, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Calibrate(tc.truth, tc.w, 2)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-15 }
			if got.Correct != tc.want.Correct || !same(got.ConfidentCorrect, tc.want.ConfidentCorrect) ||
				!same(got.ConfidentWrong, tc.want.ConfidentWrong) || !same(got.Brier, tc.want.Brier) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
