package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
)

// TestBuildSameBits checks that P set up by affinity.Build, as a local run
// sets it up (standardized features, the bandwidth given or chosen by a
// rule), gives the same bits in its passes as the same Build handed a
// Coordinator, whose tasks set up the kernel from the run directory's
// spec: the local run and the Slurm worker share one home for the
// Gaussian kernel (affinity.GaussianEngine).
func TestBuildSameBits(t *testing.T) {
	const n, p, k = 157, 4, 3
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 7))
	w := make([]float64, n*k)
	for i := range w {
		w[i] = rng.Float64()
	}
	for _, tc := range []struct {
		gamma float64
		rule  affinity.Rule
		prec  tile.Precision
		block int
	}{
		{gamma: 0.3, prec: tile.Float64, block: 32},
		{rule: affinity.Neighbor, prec: tile.Float32, block: 0},
		{rule: affinity.Mass, prec: tile.Float64, block: 500},
	} {
		name := fmt.Sprintf("gamma %v rule %v %v block %d", tc.gamma, tc.rule, tc.prec, tc.block)
		build := func(engine affinity.Engine) ([]float64, []float64, float64) {
			tab := &store.Table{Features: features(n, p, 9), N: n, P: p}
			spec := affinity.Spec{Gamma: tc.gamma, GammaRule: tc.rule, Clusters: k, Precision: tc.prec, BlockSize: tc.block,
				Standardize: true, Workers: 2, Engine: engine, Name: "features"}
			b, err := affinity.Build(ctx, tab, spec)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			defer b.Close()
			pw, rows := make([]float64, n*k), make([]float64, n)
			frob, err := b.Affinity.Mul(ctx, pw, w, k, rows)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return pw, rows, frob
		}
		pw, rows, frob := build(nil)
		gpw, grows, gfrob := build(&Coordinator{Path: t.TempDir(), Tasks: 3, Launcher: &inProcess{}})
		sameBits(t, name+": P·W", gpw, pw)
		sameBits(t, name+": row sums", grows, rows)
		if gfrob != frob {
			t.Fatalf("%s: ||P||² = %v, local %v", name, gfrob, frob)
		}
	}
}
