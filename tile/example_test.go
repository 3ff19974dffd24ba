package tile_test

import (
	"context"
	"fmt"

	"github.com/ssnmf/ssnmf/tile"
)

// Three points on a line; the middle one is close to both others. P·S with
// S putting points 0 and 1 in cluster 0 and point 2 in cluster 1 sums each
// row of P over the members of each cluster.
func ExampleEngine_MulOneHot() {
	x := []float64{0, 1, 2} // n = 3 points, p = 1 feature
	src, err := tile.NewGaussian(x, 3, 1, 1)
	if err != nil {
		panic(err)
	}
	e := &tile.Engine{Source: src, BlockSize: 2, Workers: 2}
	ps := make([]float64, 3*2)
	if err := e.MulOneHot(context.Background(), ps, []int32{0, 0, 1}, 2); err != nil {
		panic(err)
	}
	for i := range 3 {
		fmt.Printf("row %d: %.4f\n", i, ps[i*2:(i+1)*2])
	}
	// Output:
	// row 0: [1.3679 0.0183]
	// row 1: [1.3679 0.3679]
	// row 2: [0.3862 1.0000]
}
