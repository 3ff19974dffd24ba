package fw_test

import (
	"context"
	"fmt"

	"github.com/ssnmf/ssnmf/fw"
)

// maxOfTwo is f(x) = max{a x1 + x2, -a x1 + x2} = a |x1| + x2, with the
// subgradient (a, 1) where x1 >= 0 and (-a, 1) where x1 < 0.
func maxOfTwo(a float64) func(x, grad []float64) float64 {
	return func(x, grad []float64) float64 {
		if x[0] >= 0 {
			grad[0], grad[1] = a, 1
			return a*x[0] + x[1]
		}
		grad[0], grad[1] = -a, 1
		return -a*x[0] + x[1]
	}
}

// The two piecewise-linear examples of Section 4 of the paper, over the
// triangle with vertices (-1, 3), (1, 3) and (0, 0), whose minimum is at
// (0, 0) for both. On max{5x1 + x2, -5x1 + x2} the oracle only ever picks
// the top vertices, and Frank-Wolfe climbs to x2 = 3; on
// max{x1/2 + x2, -x1/2 + x2} it picks (0, 0) and gets there.
func ExampleMinimizePolytope() {
	triangle := fw.Vertices{{-1, 3}, {1, 3}, {0, 0}}
	for _, a := range []float64{5, 0.5} {
		x := []float64{0.2, 1} // inside the triangle
		set := fw.DefaultPolytopeSettings()
		set.MaxIter = 1000
		res, err := fw.MinimizePolytope(context.Background(),
			fw.PolytopeProblem{Func: maxOfTwo(a), LMO: triangle.LMO}, x, &set)
		if err != nil {
			panic(err)
		}
		fmt.Printf("a = %v: x = (%.3f, %.3f), f = %.3f, stopped on %v after %d iterations\n",
			a, x[0], x[1], res.Objective, res.Status, res.Iterations)
	}
	// Output:
	// a = 5: x = (0.001, 3.000), f = 3.005, stopped on max-iter after 1000 iterations
	// a = 0.5: x = (0.000, 0.000), f = 0.000, stopped on gap after 1 iterations
}
