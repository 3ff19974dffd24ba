package tile

import "sync"

// passInput describes a pass to a vectorized kernel: exactly one of w
// (P·W, n×k) and s (P·S, n classes below k) is set, or neither (row sums and
// ||P||_F^2 only).
type passInput struct {
	k    int
	w    []float64
	s    []int32
	sums bool // the pass also wants row sums and ||P||_F^2
}

// fastKernel computes tiles of one pass with vectorized code. It is built
// per pass by newFastKernel, which exists in every build and reports false
// where no vectorized kernel is compiled in or the CPU lacks it.
type fastKernel interface {
	// newScratch returns one worker's private memory.
	newScratch() any
	// tile handles tile pt (bounds set). It either computes the tile's
	// whole contribution (pt.outR and pt.outC with their strides pt.ldR and
	// pt.ldC, which it may point at its scratch memory, and with sums
	// pt.sumRows, pt.sumCols, pt.frob) and returns true, or writes the
	// tile's values into pt.tile, for the portable consumers, and returns
	// false.
	tile(scratch any, pt *partial, diag bool) bool
	// whole reports whether tile returns true for every tile: the Engine
	// then allocates no float64 tile nor partial sums of its own.
	whole() bool
	// classMajor reports whether the kernel hands every tile's
	// contributions over class-major (pt.outR[c*pt.ldR+i]); whole must
	// then be true.
	classMajor() bool
}

// packedFeatures are a Gaussian's features prepared for the vectorized
// kernel: centred on their mean (distances do not change, and the norms
// identity loses less to cancellation), in the kernel's precision, with
// g_i = -gamma·|x_i|².
type packedFeatures struct {
	x32, g32 []float32
	x64, g64 []float64

	mu   sync.Mutex // guards cols
	cols *colPanels // float32 column panels, for one block edge at a time
}

// colPanels are the float32 column panels of every whole block of b rows
// (b a multiple of 16): block J's packed features transposed,
// xt[J·p·b + q·b + j] = x32[(J·b+j)·p + q], what packTile writes for a
// whole block's columns, so that a pass packs them once, not once a tile.
type colPanels struct {
	b  int
	xt []float32
}

// colPanels32 returns the float32 column panels for blocks of b rows,
// packing them on first use (again if b changed), or nil where b is not a
// multiple of 16 or there is no whole block.
func (pk *packedFeatures) colPanels32(n, p, b int) *colPanels {
	if b <= 0 || b%16 != 0 || n < b {
		return nil
	}
	pk.mu.Lock()
	defer pk.mu.Unlock()
	if pk.cols != nil && pk.cols.b == b {
		return pk.cols
	}
	nb := n / b
	c := &colPanels{b: b, xt: make([]float32, nb*p*b)}
	for J := range nb {
		xt := c.xt[J*p*b : (J+1)*p*b]
		for j := range b {
			for q, v := range pk.x32[(J*b+j)*p : (J*b+j+1)*p] {
				xt[q*b+j] = v
			}
		}
	}
	pk.cols = c
	return c
}

// packed returns the Gaussian's packed features, computing them on first
// use.
func (g *Gaussian) packed() *packedFeatures {
	g.packOnce.Do(func() {
		n, p := g.n, g.p
		mean := ColumnMeans(g.x, n, p)
		pk := &packedFeatures{}
		if g.prec == Float32 {
			pk.x32, pk.g32 = make([]float32, n*p), make([]float32, n)
			for i := range n {
				var s float64
				for q, v := range g.x[i*p : (i+1)*p] {
					c := float32(v - mean[q])
					pk.x32[i*p+q] = c
					s += float64(c) * float64(c)
				}
				pk.g32[i] = float32(-g.gamma * s)
			}
		} else {
			pk.x64, pk.g64 = make([]float64, n*p), make([]float64, n)
			for i := range n {
				var s float64
				for q, v := range g.x[i*p : (i+1)*p] {
					c := v - mean[q]
					pk.x64[i*p+q] = c
					s += c * c
				}
				pk.g64[i] = -g.gamma * s
			}
		}
		g.pack = pk
	})
	return g.pack
}

// Kernel names the tile kernel the Engine's passes run, for logs and run
// summaries: the family and the precision of the source's values, such as
// "avx512/float32", "avx2/float64" (amd64) or "neon/float32" (arm64) for
// the vectorized kernel of a Gaussian source where the Engine's ISA
// resolves to a family with one, "go/float32" or "go/float64" for the
// portable kernel (tiles are handled in float64 there).
func (e *Engine) Kernel() string {
	prec := Float64
	if g, ok := e.Source.(*Gaussian); ok {
		prec = g.prec
	}
	if isa, ok := e.denseFamily(); ok {
		return isa.String() + "/" + prec.String()
	}
	return "go/" + prec.String()
}

// VectorFamily returns the name of the kernel family the Engine's ISA
// stands for on this CPU ("go", "avx2", "avx512", "neon"), "go" if the
// CPU lacks it: the family a consumer of its tiles (package fw's strips)
// runs its own vector code with.
func (e *Engine) VectorFamily() string {
	isa, err := e.ISA.Resolve()
	if err != nil {
		return ISAGo.String()
	}
	return isa.String()
}

// denseFamily returns the family the Engine's ISA resolves to on this CPU
// and whether that family's vectorized kernel generates the Engine's
// tiles.
func (e *Engine) denseFamily() (ISA, bool) {
	isa, err := e.ISA.Resolve()
	return isa, err == nil && fastCapable(isa, e.Source)
}

// DenseVectorKernel reports whether this build has a vectorized kernel of
// family isa for the dense Gaussian passes (amd64: avx512 and avx2;
// arm64: neon; other architectures: none), ISAAuto standing for the
// family it resolves to on this CPU. The passes of a Gaussian source run
// it where the CPU runs that family.
func DenseVectorKernel(isa ISA) bool {
	if isa == ISAAuto {
		isa = SupportedISAs()[0]
	}
	return fastFamily(isa)
}
