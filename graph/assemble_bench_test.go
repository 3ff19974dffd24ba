package graph

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// benchLists returns the lists of n rows of m neighbours each, the row
// itself first and m-1 others drawn near it (as a kNN search leaves them:
// most edges local, many mutual), with distances increasing along a list.
func benchLists(n, m int) *best {
	b := newBest(n, m)
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range n {
		b.offer(i, 0, int32(i))
		for b.cnt[i] < int32(m) {
			j := i + rng.IntN(4*m) - 2*m
			if j < 0 || j >= n || j == i {
				continue
			}
			b.offer(i, pairDistance(i, j), int32(j))
		}
	}
	return b
}

// pairDistance is a made-up squared distance of rows i and j, the same
// both ways.
func pairDistance(i, j int) float64 {
	lo, hi := uint64(min(i, j)), uint64(max(i, j))
	h := (lo*0x9E3779B97F4A7C15 ^ hi*0xC2B2AE3D27D4EB4F) >> 11
	return 0.1 + float64(h)/(1<<53)
}

// BenchmarkAssemble times the symmetrization of kNN lists into the CSR
// file of the graph (best.graph): n = 10⁶ rows of 30 neighbours, and
// reports input entries (n·m) a second.
func BenchmarkAssemble(b *testing.B) {
	const n, m = 1_000_000, 30
	dir := b.TempDir()
	for b.Loop() {
		b.StopTimer()
		lists := benchLists(n, m)
		b.StartTimer()
		g, err := lists.graph(SelfTuning, filepath.Join(dir, "g.csr"), 1, nil, 2)
		if err != nil {
			b.Fatal(err)
		}
		g.Close()
	}
	b.ReportMetric(float64(n)*m*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkDescentBackward times descent's backward pass on 10⁶ rows with
// 29 forward candidates each, most near the row (as a partition's leaves
// hold them) and some anywhere, and reports forward entries a second.
func BenchmarkDescentBackward(b *testing.B) {
	const n, fw, reverse = 1_000_000, 29, 15
	a := &approxSearch{n: n, m: fw + 1, workers: 2}
	d := &descent{a: a, fw: fw, reverse: reverse, width: fw + reverse, rangeRows: backwardRange, chunk: backwardChunk}
	d.fwd, d.rev, d.rank, d.filled = make([]int32, n*fw), make([]int32, n*reverse), make([]uint8, n*reverse), make([]bool, n)
	rng := rand.New(rand.NewPCG(7, 7))
	fill := func() {
		for i := range n {
			c := d.fwd[i*fw : (i+1)*fw]
			for e := range fw {
				j := rng.IntN(n)
				if e < 20 {
					j = min(max(i+rng.IntN(1024)-512, 0), n-1)
				}
				c[e] = int32(j)
				if e%3 == 0 {
					c[e] = ^c[e]
				}
			}
		}
	}
	for b.Loop() {
		b.StopTimer()
		fill()
		b.StartTimer()
		if err := d.backward(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*fw*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}
