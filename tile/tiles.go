package tile

import "fmt"

// tileGen is the memory of one Engine.Tile call on the vectorized kernel:
// a generation-only kernel of family isa for tiles up to b×b and one
// worker's scratch.
type tileGen struct {
	isa     ISA
	b       int
	kn      fastKernel
	scratch any
	pt      partial
}

// Tile writes P[r0:r1, c0:c1] into dst, row-major with stride c1-c0, like
// Source.Tile, but generates the values with the vectorized kernel that
// Kernel names, if there is one. The passes of the Engine see the same
// values. A diagonal tile (r0 == c0, r1 == c1) is exactly symmetric. Tile
// may be called from several goroutines at once.
func (e *Engine) Tile(dst []float64, r0, r1, c0, c1 int) error {
	n := e.Source.N()
	h, w := r1-r0, c1-c0
	if r0 < 0 || c0 < 0 || h < 0 || w < 0 || r1 > n || c1 > n {
		return fmt.Errorf("tile rows %d:%d cols %d:%d out of range for n = %d", r0, r1, c0, c1, n)
	}
	if len(dst) < h*w {
		return fmt.Errorf("tile rows %d:%d cols %d:%d: room for %d values, want %d", r0, r1, c0, c1, len(dst), h*w)
	}
	isa, vector := e.denseFamily()
	if !vector || h == 0 || w == 0 {
		return e.Source.Tile(dst, r0, r1, c0, c1)
	}
	b := max(h, w)
	tg, _ := e.gens.Get().(*tileGen)
	if tg == nil || tg.b < b || tg.isa != isa {
		kn, ok := newFastKernel(isa, e.Source, passInput{}, b)
		if !ok {
			return e.Source.Tile(dst, r0, r1, c0, c1)
		}
		tg = &tileGen{isa: isa, b: b, kn: kn, scratch: kn.newScratch()}
	}
	defer e.gens.Put(tg)
	pt := &tg.pt
	*pt = partial{tile: dst[:h*w], r0: r0, r1: r1, c0: c0, c1: c1}
	diag := r0 == c0 && r1 == c1
	if tg.kn.tile(tg.scratch, pt, diag) {
		return fmt.Errorf("tile rows %d:%d cols %d:%d: the vectorized kernel did not return the tile", r0, r1, c0, c1)
	}
	if diag {
		// The norms identity rounds P_ij and P_ji apart; keep the upper
		// triangle, as Gaussian.Tile does.
		mirrorUpper(dst, w)
	}
	return nil
}
