// Package sample draws samples of rows: s distinct indices of n, by
// Floyd's algorithm, in O(s) time and memory whatever n, so that a sample
// of a data set larger than memory costs what the sample costs.
package sample

import "math/rand/v2"

// Rows returns s distinct indices of [0, n) drawn with rng, 0 <= s <= n,
// in the order Floyd's algorithm draws them (not sorted, not shuffled).
func Rows(rng *rand.Rand, n, s int) []int {
	picked := make(map[int]bool, s)
	rows := make([]int, 0, s)
	for j := n - s; j < n; j++ {
		i := rng.IntN(j + 1)
		if picked[i] {
			i = j
		}
		picked[i] = true
		rows = append(rows, i)
	}
	return rows
}
