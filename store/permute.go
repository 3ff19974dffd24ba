package store

import "fmt"

// permuteChunkBytes bounds the rows of dst that PermuteRows fills in one
// scan of src: the pages of dst a scan writes.
const permuteChunkBytes = 256 << 20

// PermuteRows puts the rows of src (n×k, row-major) into dst in another
// order: row q of src becomes row order[q] of dst, where order is a
// permutation of 0..n-1 (as graph.Partition returns it: the input's row
// at each position). It reads src in order, once for each run of dst's
// rows that fits in 256 MiB, and fills each run before the next, so that
// both may be memory-mapped files larger than memory, visited
// sequentially rather than at random.
func PermuteRows(dst, src []float64, k int, order []int32) error {
	return permuteRows(dst, src, k, order, permuteChunkBytes)
}

// permuteRows is PermuteRows filling runs of dst of chunkBytes.
func permuteRows(dst, src []float64, k int, order []int32, chunkBytes int) error {
	n := len(order)
	if len(src) != n*k || len(dst) != n*k {
		return fmt.Errorf("store: permute %d and %d values as %d rows of %d", len(src), len(dst), n, k)
	}
	seen := make([]bool, n)
	for q, i := range order {
		if i < 0 || int(i) >= n || seen[i] {
			return fmt.Errorf("store: order[%d] = %d is not a permutation of %d rows", q, i, n)
		}
		seen[i] = true
	}
	chunk := max(1, chunkBytes/(8*max(k, 1)))
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		for q, i := range order {
			if int(i) >= lo && int(i) < hi {
				copy(dst[int(i)*k:int(i+1)*k], src[q*k:(q+1)*k])
			}
		}
	}
	return nil
}
