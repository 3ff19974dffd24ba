package kmeans_test

import (
	"context"
	"fmt"

	"github.com/ssnmf/ssnmf/kmeans"
)

func ExampleCluster() {
	// Six points in the plane, in two groups.
	x := []float64{
		0, 0, 0, 1, 1, 0,
		9, 9, 9, 10, 10, 9,
	}
	r, err := kmeans.Cluster(context.Background(), x, 6, 2, 2, kmeans.Settings{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Labels[0] == r.Labels[1], r.Labels[1] == r.Labels[2], r.Labels[0] != r.Labels[3])
	fmt.Printf("sizes %v, inertia %.4g, converged %v\n", r.Sizes, r.Inertia, r.Converged)

	// The clustering as a starting point for the Frank-Wolfe solver.
	w := make([]float64, 6*2)
	if err := r.OneHot(w); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(w[:2][r.Labels[0]], w[:2][1-r.Labels[0]])
	// Output:
	// true true true
	// sizes [3 3], inertia 2.667, converged true
	// 1 0
}
