package fw_test

import (
	"context"
	"fmt"

	"github.com/ssnmf/ssnmf/fw"
)

// Six points in two groups: strong affinity within a group, weak across,
// solved from the same start by Frank-Wolfe and by row-wise coordinate
// descent, the default method (a Dense affinity offers the sweeps it needs).
// The memberships come out soft: a little mass on the other cluster
// explains the weak affinity across the groups.
func ExampleMinimize() {
	const n, k = 6, 2
	P := make([]float64, n*n)
	for i := range n {
		for j := range n {
			P[i*n+j] = 0.05
			if i/3 == j/3 {
				P[i*n+j] = 1
			}
		}
	}
	aff, err := fw.NewDense(n, P)
	if err != nil {
		panic(err)
	}
	for _, m := range []struct {
		name   string
		method fw.Method
	}{{"Frank-Wolfe", &fw.FrankWolfe{}}, {"row-CD", &fw.RowCD{}}} {
		w := make([]float64, n*k)
		if err := fw.Initialize(w, k, fw.StartRandom, 1); err != nil {
			panic(err)
		}
		set := fw.Settings{GapTol: 1e-9}
		res, err := fw.Minimize(context.Background(), fw.Problem{P: aff, K: k}, w, &set, m.method)
		if err != nil {
			panic(err)
		}
		fmt.Println(m.name, "stopped on:", res.Status)
		for i := range n {
			fmt.Printf("point %d: %.2f\n", i, w[i*k:(i+1)*k])
		}
	}
	// Output:
	// Frank-Wolfe stopped on: gap
	// point 0: [0.99 0.01]
	// point 1: [0.99 0.01]
	// point 2: [0.99 0.01]
	// point 3: [0.01 0.99]
	// point 4: [0.01 0.99]
	// point 5: [0.01 0.99]
	// row-CD stopped on: gap
	// point 0: [0.99 0.01]
	// point 1: [0.99 0.01]
	// point 2: [0.99 0.01]
	// point 3: [0.01 0.99]
	// point 4: [0.01 0.99]
	// point 5: [0.01 0.99]
}
