package graph

import (
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
