package sample

import (
	"math/rand/v2"
	"testing"
)

func TestRows(t *testing.T) {
	for _, tc := range []struct{ n, s int }{{0, 0}, {1, 1}, {10, 0}, {10, 10}, {1000, 37}} {
		rows := Rows(rand.New(rand.NewPCG(1, 2)), tc.n, tc.s)
		seen := map[int]bool{}
		for _, i := range rows {
			if i < 0 || i >= tc.n || seen[i] {
				t.Fatalf("n=%d s=%d: %v is not a sample of distinct rows", tc.n, tc.s, rows)
			}
			seen[i] = true
		}
		if len(rows) != tc.s {
			t.Fatalf("n=%d s=%d: %d rows", tc.n, tc.s, len(rows))
		}
	}
	// Every row is drawn about as often.
	count := make([]int, 10)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		for _, i := range Rows(rng, 10, 3) {
			count[i]++
		}
	}
	for i, c := range count {
		if c < 5400 || c > 6600 {
			t.Errorf("row %d drawn %d times in 20000 samples of 3 of 10, want about 6000", i, c)
		}
	}
}
