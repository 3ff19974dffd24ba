//go:build invariants

package fw

import "fmt"

// checkRows panics if a row of w left the simplex. It runs after every
// update when the invariants build tag is set: go test -tags invariants.
func checkRows(w []float64, k int) {
	if err := checkSimplex(w, k, 1e-12); err != nil {
		panic(fmt.Sprintf("fw invariant: %v", err))
	}
}
