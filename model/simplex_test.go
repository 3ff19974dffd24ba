package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// bruteSimplex returns the least f(w) = wᵀGw - 2bᵀw over the simplex by
// enumerating every support: on each, the stationary points of f on its
// affine hull (a least-squares solution of the KKT system, so that a
// singular one counts too) that lie in the simplex.
func bruteSimplex(G, b []float64, k int) float64 {
	best := math.Inf(1)
	for mask := 1; mask < 1<<k; mask++ {
		var S []int
		for i := range k {
			if mask>>i&1 == 1 {
				S = append(S, i)
			}
		}
		m := len(S)
		a := mat.NewDense(m+1, m+1, nil)
		rhs := mat.NewVecDense(m+1, nil)
		for r, i := range S {
			for c, j := range S {
				a.Set(r, c, G[i*k+j])
			}
			a.Set(r, m, 1)
			a.Set(m, r, 1)
			rhs.SetVec(r, b[i])
		}
		rhs.SetVec(m, 1)
		var x mat.VecDense
		if err := x.SolveVec(a, rhs); err != nil {
			// Singular: the minimum-norm least-squares solution.
			var svd mat.SVD
			if !svd.Factorize(a, mat.SVDFull) {
				continue
			}
			var xm mat.Dense
			svd.SolveTo(&xm, rhs, svd.Rank(1e-12))
			x.CloneFromVec(xm.ColView(0))
		}
		w := make([]float64, k)
		ok := true
		for r, i := range S {
			if x.AtVec(r) < -1e-12 {
				ok = false
			}
			w[i] = max(x.AtVec(r), 0)
		}
		if ok {
			best = min(best, quad(G, b, k, w))
		}
	}
	return best
}

func quad(G, b []float64, k int, w []float64) float64 {
	var f float64
	for i := range k {
		for j := range k {
			f += w[i] * G[i*k+j] * w[j]
		}
		f -= 2 * b[i] * w[i]
	}
	return f
}

// problemOf returns G = WᵀW and b = Wᵀp for W (n×k) and p.
func problemOf(W, p []float64, n, k int) (G, b []float64) {
	G, b = make([]float64, k*k), make([]float64, k)
	for r := range n {
		row := W[r*k : (r+1)*k]
		for i := range k {
			b[i] += row[i] * p[r]
			for j := range k {
				G[i*k+j] += row[i] * row[j]
			}
		}
	}
	return G, b
}

func TestSimplexBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name string
		k    int
		make func(W []float64, n, k int) // shapes W after a random fill
	}{
		{"k1", 1, nil},
		{"k2", 2, nil},
		{"k3", 3, nil},
		{"k6", 6, nil},
		{"k6 duplicated column", 6, func(W []float64, n, k int) {
			for r := range n {
				W[r*k+4] = W[r*k+1]
			}
		}},
		{"k5 two empty clusters", 5, func(W []float64, n, k int) {
			for r := range n {
				W[r*k+2], W[r*k+3] = 0, 0
			}
		}},
		{"k4 one-hot rows", 4, func(W []float64, n, k int) {
			for r := range n {
				c := r % k
				for j := range k {
					W[r*k+j] = 0
				}
				W[r*k+c] = 1
			}
		}},
		{"k5 affine dependence", 5, func(W []float64, n, k int) {
			for r := range n {
				W[r*k+4] = (W[r*k+0] + W[r*k+1]) / 2
			}
		}},
	}
	for _, c := range cases {
		for trial := range 200 {
			t.Run(fmt.Sprintf("%s/%d", c.name, trial), func(t *testing.T) {
				n, k := 12, c.k
				W, p := make([]float64, n*k), make([]float64, n)
				for i := range W {
					W[i] = rng.Float64()
				}
				if c.make != nil {
					c.make(W, n, k)
				}
				for i := range p {
					p[i] = 3*rng.Float64() - 0.5
				}
				if trial%3 == 0 { // p in the cone of W's columns: an interior optimum is likely
					for r := range n {
						p[r] = 0
						for j := range k {
							p[r] += W[r*k+j] / float64(k)
						}
					}
				}
				G, b := problemOf(W, p, n, k)
				w := make([]float64, k)
				var s SimplexScratch
				if err := Simplex(G, b, k, w, &s); err != nil {
					t.Fatal(err)
				}
				var sum float64
				for _, v := range w {
					if v < 0 {
						t.Fatalf("w %v has a negative entry", w)
					}
					sum += v
				}
				if math.Abs(sum-1) > 1e-12 {
					t.Fatalf("w %v sums to %v", w, sum)
				}
				got, want := quad(G, b, k, w), bruteSimplex(G, b, k)
				if got > want+1e-9*(1+math.Abs(want)) {
					t.Fatalf("f(w) = %.15g, brute force %.15g (w %v)", got, want, w)
				}
				checkKKT(t, G, b, k, w)
			})
		}
	}
}

// checkKKT checks the optimality conditions of w: the gradient Gw - b is
// the same on w's support and no smaller off it.
func checkKKT(t *testing.T, G, b []float64, k int, w []float64) {
	t.Helper()
	g := make([]float64, k)
	scale := 0.0
	for i := range k {
		for j := range k {
			g[i] += G[i*k+j] * w[j]
			scale = max(scale, math.Abs(G[i*k+j]))
		}
		g[i] -= b[i]
		scale = max(scale, math.Abs(b[i]))
	}
	lambda := math.Inf(1)
	for i := range k {
		lambda = min(lambda, g[i])
	}
	for i := range k {
		if w[i] > 1e-9 && g[i]-lambda > 1e-9*scale {
			t.Fatalf("KKT: index %d has w %g but gradient %g above the least %g", i, w[i], g[i], lambda)
		}
	}
}

func TestSimplexRejects(t *testing.T) {
	var s SimplexScratch
	if err := Simplex(make([]float64, 4), make([]float64, 3), 2, make([]float64, 2), &s); err == nil {
		t.Fatal("a problem of the wrong shape was accepted")
	}
}

func BenchmarkSimplex(b *testing.B) {
	for _, k := range []int{10, 50} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			n := 200
			W, p := make([]float64, n*k), make([]float64, n)
			for i := range W {
				W[i] = rng.Float64()
			}
			for i := range p {
				p[i] = rng.Float64()
			}
			G, bb := problemOf(W, p, n, k)
			w := make([]float64, k)
			var s SimplexScratch
			for b.Loop() {
				if err := Simplex(G, bb, k, w, &s); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/row")
		})
	}
}
