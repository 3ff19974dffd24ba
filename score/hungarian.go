package score

import "math"

// maxMatch returns the largest total weight of a one-to-one matching between
// the rows and columns of the rows×cols weight matrix w (row-major), and the
// column matched to each row, or -1 for a row left unmatched (possible only
// when rows > cols).
//
// The matrix is padded with zeros to a square m×m matrix, m = max(rows, cols),
// and its negation is passed to assign: a padded row or column matches at no
// cost, which is how unmatched rows or columns are expressed.
func maxMatch(w []int64, rows, cols int) (int64, []int) {
	m := max(rows, cols)
	cost := make([]int64, m*m)
	for i := range rows {
		for j := range cols {
			cost[i*m+j] = -w[i*cols+j]
		}
	}
	rowToCol := assign(cost, m)
	var total int64
	match := make([]int, rows)
	for i := range rows {
		j := rowToCol[i]
		if j < cols {
			total += w[i*cols+j]
			match[i] = j
		} else {
			match[i] = -1
		}
	}
	return total, match
}

// assign solves the linear assignment problem for the m×m cost matrix cost
// (row-major): it returns the permutation p minimizing Σ_i cost[i][p[i]],
// with p[i] the column assigned to row i.
//
// It is the O(m³) Hungarian method in its shortest-augmenting-path form
// (Kuhn–Munkres with Jonker–Volgenant style potentials). Rows are inserted
// one at a time; each insertion runs a Dijkstra-like search over reduced
// costs cost[i][j] − u[i] − v[j] ≥ 0 for the cheapest augmenting path to a
// free column, then updates the potentials u, v so that the reduced costs
// stay non-negative and are zero on the matching. All arithmetic is on
// integers, so the result is exact (for costs whose sums fit in an int64).
func assign(cost []int64, m int) []int {
	// Index 0 of the column arrays is a virtual column that holds the row
	// being inserted; real rows and columns are numbered 1..m.
	u := make([]int64, m+1)    // row potentials
	v := make([]int64, m+1)    // column potentials
	owner := make([]int, m+1)  // owner[j] = row matched to column j, 0 if free
	prev := make([]int, m+1)   // prev[j] = preceding column on the shortest path to j
	dist := make([]int64, m+1) // dist[j] = reduced length of the shortest path to j
	done := make([]bool, m+1)  // done[j] = column j is in the search tree
	for i := 1; i <= m; i++ {
		owner[0] = i
		for j := range dist {
			dist[j] = math.MaxInt64
			done[j] = false
		}
		j0 := 0 // the column whose owner is being expanded
		for {
			done[j0] = true
			i0 := owner[j0]
			row := cost[(i0-1)*m : i0*m]
			delta := int64(math.MaxInt64)
			j1 := 0
			for j := 1; j <= m; j++ {
				if done[j] {
					continue
				}
				if r := row[j-1] - u[i0] - v[j]; r < dist[j] {
					dist[j] = r
					prev[j] = j0
				}
				if dist[j] < delta {
					delta = dist[j]
					j1 = j
				}
			}
			// Every free column now has a finite dist, so none overflows.
			for j := 0; j <= m; j++ {
				if done[j] {
					u[owner[j]] += delta
					v[j] -= delta
				} else {
					dist[j] -= delta
				}
			}
			j0 = j1
			if owner[j0] == 0 {
				break // reached a free column
			}
		}
		// Augment: shift the matching along the path back to column 0.
		for j0 != 0 {
			j1 := prev[j0]
			owner[j0] = owner[j1]
			j0 = j1
		}
	}
	rowToCol := make([]int, m)
	for j := 1; j <= m; j++ {
		rowToCol[owner[j]-1] = j - 1
	}
	return rowToCol
}
