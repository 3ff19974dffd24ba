package tilefile

import (
	"runtime"
	"sort"
)

// grid enumerates the upper-triangular tiles (I <= J) of an n×n matrix in
// blocks of b, in row-major order: tile t = (I, J).
type grid struct {
	n, b, nb int
	start    []int // start[I] = index of tile (I, I)
}

func newGrid(n, b int) grid {
	nb := (n + b - 1) / b
	start := make([]int, nb+1)
	for i := range nb {
		start[i+1] = start[i] + nb - i
	}
	return grid{n: n, b: b, nb: nb, start: start}
}

func (g grid) tiles() int { return g.start[g.nb] }

// index returns the tile number of (I, J), I <= J.
func (g grid) index(I, J int) int { return g.start[I] + J - I }

func (g grid) coords(t int) (I, J int) {
	I = sort.Search(g.nb, func(i int) bool { return g.start[i+1] > t })
	return I, I + t - g.start[I]
}

func (g grid) bounds(t int) (r0, r1, c0, c1 int) {
	I, J := g.coords(t)
	return I * g.b, min((I+1)*g.b, g.n), J * g.b, min((J+1)*g.b, g.n)
}

func defaultWorkers() int { return runtime.GOMAXPROCS(0) }
