package solver

import (
	"context"
	"math"
	"testing"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/methods"
)

// TestMeterCountsPasses checks that the meter counts every pass over P of
// a run, those of row-CD's sweeps included, for every method: its count
// equals the Result's.
func TestMeterCountsPasses(t *testing.T) {
	const n, k = 40, 3
	p := make([]float64, n*n)
	for i := range n {
		for j := range n {
			d := float64(i%4 - j%4)
			p[i*n+j] = math.Exp(-d*d) + 0.01*float64((i+j)%3)
		}
	}
	dense, err := fw.NewDense(n, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range methods.All() {
		if m.Features || m.Graph { // they need the features or the embedding
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			for _, block := range []int{0, 8} { // one strip, or five
				w := make([]float64, n*k)
				if err := fw.Initialize(w, k, fw.StartRandom, 1); err != nil {
					t.Fatal(err)
				}
				mt := &Meter{Affinity: dense}
				set := fw.Settings{MaxIter: 7, Refresh: 3, GapTol: -1}
				res, err := fw.Minimize(context.Background(), fw.Problem{P: mt, K: k}, w, &set, m.New(methods.Params{BlockSize: block}))
				if err != nil {
					t.Fatal(err)
				}
				if mt.Passes != res.Passes || res.Passes < 2 {
					t.Errorf("block %d: the meter counted %d passes, the result %d", block, mt.Passes, res.Passes)
				}
			}
		})
	}
}
