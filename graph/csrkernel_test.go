package graph

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ssnmf/ssnmf/tile"
)

// TestMulKernels checks that every vector kernel of CSR.Mul this CPU runs
// gives the portable loop's bits: P·W, the row sums and ||P||_F², for
// widths below, at and above each kernel's vectors (rows without entries
// included), and that it writes nothing past dst.
func TestMulKernels(t *testing.T) {
	const n = 61
	rng := rand.New(rand.NewPCG(3, 3))
	m := sparseGraph(t, n, func(i, j int) float64 {
		if i%5 == 0 || j%5 == 0 || rng.IntN(3) > 0 { // rows 0, 5, ... have no entries
			return 0
		}
		return rng.Float64()
	})
	m.Scale = 1.7
	ctx := context.Background()
	for _, isa := range tile.SupportedISAs() {
		for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 10, 12, 15, 16, 17, 24, 31, 32, 33, 40, 65} {
			t.Run(fmt.Sprintf("%s/k=%d", isa, k), func(t *testing.T) {
				w := make([]float64, n*k)
				for i := range w {
					w[i] = rng.NormFloat64()
				}
				m.Kernel = tile.ISAGo
				want, wantSums := make([]float64, n*k), make([]float64, n)
				wantFrob, err := m.Mul(ctx, want, w, k, wantSums)
				if err != nil {
					t.Fatal(err)
				}
				m.Kernel = isa
				got := make([]float64, n*k+8)
				for i := range got {
					got[i] = math.NaN()
				}
				sums := make([]float64, n)
				frob, err := m.Mul(ctx, got[:n*k], w, k, sums)
				if err != nil {
					t.Fatal(err)
				}
				if math.Float64bits(frob) != math.Float64bits(wantFrob) {
					t.Errorf("||P||² = %v, want %v", frob, wantFrob)
				}
				for i, v := range want {
					if math.Float64bits(got[i]) != math.Float64bits(v) {
						t.Fatalf("P·W[%d][%d] = %v, want %v (%s)", i/k, i%k, got[i], v, m.KernelName())
					}
				}
				for i, v := range wantSums {
					if math.Float64bits(sums[i]) != math.Float64bits(v) {
						t.Fatalf("row sum %d = %v, want %v", i, sums[i], v)
					}
				}
				for i, v := range got[n*k:] {
					if !math.IsNaN(v) {
						t.Fatalf("dst[n·k+%d] written: %v", i, v)
					}
				}
			})
		}
	}
}

// sparseGraph returns the n×n CSR of the symmetric matrix whose entries
// (i, j), j >= i, are value(i, j).
func sparseGraph(t *testing.T, n int, value func(i, j int) float64) *CSR {
	t.Helper()
	dense := make([]float64, n*n)
	for i := range n {
		for j := i; j < n; j++ {
			dense[i*n+j] = value(i, j)
			dense[j*n+i] = dense[i*n+j]
		}
	}
	return fromDense(t, n, dense)
}

// TestMulKernelName checks the kernel's name and that a family the CPU
// lacks is refused.
func TestMulKernelName(t *testing.T) {
	m, _ := randomGraph(t, 8, 2, 1)
	m.Kernel = tile.ISAGo
	if got := m.KernelName(); got != "go/csr" {
		t.Errorf("KernelName = %q, want go/csr", got)
	}
	m.Kernel = tile.ISAAuto
	best := tile.SupportedISAs()[0]
	if ks, _ := rowKernels(best); ks != nil && m.KernelName() != best.String()+"/csr" {
		t.Errorf("KernelName = %q, want %s/csr", m.KernelName(), best)
	}
	for _, isa := range []tile.ISA{tile.ISAAVX2, tile.ISAAVX512, tile.ISANEON} {
		if _, err := isa.Resolve(); err == nil {
			continue
		}
		m.Kernel = isa
		if _, err := m.Mul(context.Background(), make([]float64, 8), make([]float64, 8), 1, nil); err == nil {
			t.Errorf("Mul with %s, which this CPU lacks: no error", isa)
		}
	}
}
