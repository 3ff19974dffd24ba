//go:build amd64 || arm64

package tile

// This file holds the Go code of the vectorized dense kernels that every
// vector family shares: AVX-512 and AVX2 with FMA on amd64
// (dense_amd64.go), NEON on arm64 (dense_arm64.go). A tile is computed in
// three phases that never mix scalar floating-point code into a vector
// loop: packing (scalar: the tile's rows and columns are copied, centred,
// into panels; the rows' panels only when the tile's rows differ from the
// previous tile's on the same scratch), generation (vector: distances by
// the norms identity d² = |x_i|² + |x_j|² - 2 x_i·x_j with a blocked
// dot-product kernel, then a vectorized exp, taken in registers before
// the block is stored where the family has such kernels, gen32exp:
// AVX-512 in float32; else a pass over each 8 rows), and consumption (vector: the tile, still in cache, is
// added into float64 accumulators, which the Engine's commit then adds to
// the output as they are: class-major for P·S, with stride kp for P·W).
// Here are the kernels of a pass (kernel32, kernel64), their packing and
// the order of their phases, the drivers of the micro-kernels (genTiles,
// gemmTile) and the checks of the one-hot consumer; each architecture's
// file supplies its families' assembly in a table, denseKernels, listed
// in denseTables, and addFloat64s.

// denseKernels is one family's assembly kernels of the dense Gaussian
// tiles and the blocking they need. The tiles are padded alike in every
// family (to 16 float32 or 8 float64 values, and P·W's columns to
// 16 or 8), so kernel32 and kernel64 run any family from its table.
// The tables are read-only.
type denseKernels struct {
	isa  ISA
	rows int // rows of a generation or P·W micro-kernel's block; divides 8
	// The columns of the micro-kernels' unit of width in float32 and
	// float64: a vector's lanes on amd64, two vectors' on arm64 (NEON's
	// narrowest kernels cover two 128-bit vectors); divide 16 and 8.
	cols32, cols64 int
	// The micro-kernels by the number of units of columns they cover:
	// kernels[nv-1] covers nv.
	gen32 []genKernel[float32]
	gen64 []genKernel[float64]
	// gen32 with exp32 applied in registers before the block is stored
	// (the same bits, one pass over the tile fewer), if the family has
	// them; nil otherwise.
	gen32exp []genKernel[float32]
	gemm32   []gemmKernel[float32]
	gemm64   []gemmKernel[float64]
	// The exps and the one-hot consumer (see exp32Slice, exp64Slice and
	// consume16 of each architecture).
	exp32   func(t []float32)
	exp64   func(t []float64)
	consume func(t *float32, hp, wp int, sr, sc *int32, accR, accC *float64, cols, frob bool, sq *[8]float64)
}

// denseKernelsOf returns family isa's dense kernels, nil if there are
// none here (the CPU's support is not checked).
func denseKernelsOf(isa ISA) *denseKernels {
	for _, fam := range denseTables {
		if fam.isa == isa {
			return fam
		}
	}
	return nil
}

// fastFamily reports whether there is a dense kernel of family isa here.
func fastFamily(isa ISA) bool { return denseKernelsOf(isa) != nil }

// flushEvery is the number of products a float32 partial sum of the P·W
// kernel holds before it is added into float64.
const flushEvery = 64

// padArg is the exponent term of padding rows and columns: their entries
// come out exactly 0.
const padArg = -1e30

// fastCapable reports whether family isa's dense kernel runs src's tiles
// on this CPU.
func fastCapable(isa ISA, src Source) bool {
	_, ok := src.(*Gaussian)
	return ok && fastFamily(isa) && cpuHas(isa)
}

// newFastKernel returns family isa's dense kernel for a pass over src's
// tiles, if fastCapable.
func newFastKernel(isa ISA, src Source, in passInput, b int) (fastKernel, bool) {
	if !fastCapable(isa, src) {
		return nil, false
	}
	g, fam := src.(*Gaussian), denseKernelsOf(isa)
	if g.prec == Float32 {
		return newKernel32(fam, g, in, b), true
	}
	return newKernel64(fam, g, in, b), true
}

// consumeOneHot32 adds an hp×wp float32 tile t (row-major, stride wp) to
// the class-major float64 accumulators with family fam's consumer: accR
// gets the row direction, accR[c*hp+i] += sum of t[i][j] over the j with
// sc[j] = c, and, off the diagonal, accC[c*wp+j] += sum of t[i][j] over
// the i with sr[i] = c. With frob it returns the sum of squares of the
// tile's entries.
func (fam *denseKernels) consumeOneHot32(t []float32, hp, wp int, sr, sc []int32, accR, accC []float64, diag, frob bool) float64 {
	if hp == 0 || wp == 0 {
		return 0
	}
	// The assembly indexes the accumulators by class: check every class
	// against their sizes (a bug in this package otherwise, not bad input).
	if hp%16 != 0 || wp%16 != 0 || len(t) < hp*wp || len(sr) < hp || len(sc) < wp ||
		!classesFit(sc[:wp], len(accR), hp, hp) || !diag && !classesFit(sr[:hp], len(accC), wp, wp) {
		panic("tile: consumeOneHot32 called with inconsistent sizes")
	}
	var buf [8]float64
	var accC0 *float64
	if !diag {
		accC0 = &accC[0]
	}
	fam.consume(&t[0], hp, wp, &sr[0], &sc[0], &accR[0], accC0, !diag, frob, &buf)
	if !frob {
		return 0
	}
	return ((buf[0] + buf[1]) + (buf[2] + buf[3])) + ((buf[4] + buf[5]) + (buf[6] + buf[7]))
}

// classesFit reports whether every class c of s addresses a block
// acc[c*ld : c*ld+m] within n values.
func classesFit(s []int32, n, ld, m int) bool {
	for _, c := range s {
		if c < 0 || int(c)*ld+m > n {
			return false
		}
	}
	return true
}

// kernel32 is the vectorized kernel of a float32 Gaussian for one pass.
type kernel32 struct {
	fam  *denseKernels
	in   passInput
	p    int
	bp   int        // tile edge rounded up to 16
	x    []float32  // centred features, n×p
	g    []float32  // -gamma·|x_i|² of the centred features
	tg   float32    // 2·gamma
	zero []int32    // bp zeros: the one class of row and column sums
	cols *colPanels // the whole blocks' column panels, or nil
}

func newKernel32(fam *denseKernels, g *Gaussian, in passInput, b int) *kernel32 {
	pk := g.packed()
	return &kernel32{fam: fam, in: in, p: g.p, bp: roundUp(b, 16), x: pk.x32, g: pk.g32, tg: float32(2 * g.gamma), zero: make([]int32, roundUp(b, 16)),
		cols: pk.colPanels32(g.n, g.p, b)}
}

// scratch32 is one worker's memory for kernel32.
type scratch32 struct {
	t          []float32 // the tile, hp×wp
	xr, xt     []float32 // row features (hp×p), column features transposed (p×wp)
	gr, gc     []float32 // -gamma·|x|² of rows and columns, padding padArg
	sr, sc     []int32   // P·S: classes of rows and columns, padding 0
	accR, accC []float64 // P·S: k×hp and k×wp by class; P·W: hp×kp and wp×kp
	wr, wc     []float32 // P·W: W's rows of the tile's rows and columns, ×kp
	sumR, sumC []float64 // row and column sums
	rows       rowPanel  // the rows xr, gr, sr and wr hold
}

func (kn *kernel32) whole() bool { return true }

func (kn *kernel32) classMajor() bool { return kn.in.s != nil }

func (kn *kernel32) kp() int { return roundUp(kn.in.k, 16) }

func (kn *kernel32) newScratch() any {
	bp, p, k := kn.bp, kn.p, kn.in.k
	s := &scratch32{
		t: make([]float32, bp*bp), xr: make([]float32, bp*p), xt: make([]float32, p*bp),
		gr: make([]float32, bp), gc: make([]float32, bp),
	}
	switch {
	case kn.in.s != nil:
		s.sr, s.sc = make([]int32, bp), make([]int32, bp)
		s.accR, s.accC = make([]float64, k*bp), make([]float64, k*bp)
	case kn.in.w != nil:
		kp := kn.kp()
		s.wr, s.wc = make([]float32, bp*kp), make([]float32, bp*kp)
		s.accR, s.accC = make([]float64, bp*kp), make([]float64, bp*kp)
	}
	if kn.in.sums {
		s.sumR, s.sumC = make([]float64, bp), make([]float64, bp)
	}
	return s
}

func (kn *kernel32) tile(scratch any, pt *partial, diag bool) bool {
	s := scratch.(*scratch32)
	r0, r1, c0, c1 := pt.r0, pt.r1, pt.c0, pt.c1
	h, w := r1-r0, c1-c0
	hp, wp := roundUp(h, 16), roundUp(w, 16)
	p, k := kn.p, kn.in.k

	// Packing (scalar); the rows' panels only if the previous tile on
	// this scratch had other rows, the columns' only for a block that is
	// not whole (the others were packed once, in kn.cols).
	xr, xt, gc := s.xr[:hp*p], s.xt[:p*wp], s.gc[:wp]
	newRows := s.rows.set(r0, r1)
	if cp := kn.cols; cp != nil && w == cp.b {
		J := c0 / cp.b
		xt, gc = cp.xt[J*p*cp.b:(J+1)*p*cp.b], kn.g[c0:c1]
		if newRows {
			packRowPanel(xr, s.gr[:hp], kn.x, kn.g, p, 8, r0, r1)
		}
	} else {
		packTile(xr, xt, s.gr[:hp], gc, kn.x, kn.g, p, 8, r0, r1, c0, c1, newRows)
	}
	if kn.in.s != nil {
		if newRows {
			copy(s.sr, kn.in.s[r0:r1])
			clear(s.sr[h:hp])
		}
		copy(s.sc, kn.in.s[c0:c1])
		clear(s.sc[w:wp])
	}
	if kn.in.w != nil {
		kp := kn.kp()
		if newRows {
			packW32(s.wr[:hp*kp], kn.in.w[r0*k:r1*k], k, kp)
		}
		packW32(s.wc[:wp*kp], kn.in.w[c0*k:c1*k], k, kp)
	}

	// Generation (vector).
	t := s.t[:hp*wp]
	kn.fam.genTile32(t, hp, wp, xr, xt, p, s.gr, gc, kn.tg)
	if diag {
		for i := range h {
			t[i*wp+i] = 1
		}
	}

	if kn.in.s == nil && kn.in.w == nil && !kn.in.sums {
		// Generation only (Engine.Tile).
		for i := range h {
			for j, v := range t[i*wp : i*wp+w] {
				pt.tile[i*w+j] = float64(v)
			}
		}
		return false
	}

	// Consumption (vector). The accumulators are handed to the commit as
	// they are: class-major for P·S, row-major with stride kp for P·W.
	switch {
	case kn.in.s != nil:
		accR, accC := s.accR[:k*hp], s.accC[:k*wp]
		clear(accR)
		if !diag {
			clear(accC)
		}
		kn.fam.consumeOneHot32(t, hp, wp, s.sr, s.sc, accR, accC, diag, false)
		pt.outR, pt.ldR, pt.outC, pt.ldC = accR, hp, accC, wp
	case kn.in.w != nil:
		kp := kn.kp()
		accR, accC := s.accR[:hp*kp], s.accC[:wp*kp]
		kn.fam.gemmTile32(accR, kp, t, wp, 1, s.wc, hp, wp, false)
		if !diag {
			kn.fam.gemmTile32(accC, kp, t, 1, wp, s.wr, wp, hp, false)
		}
		pt.outR, pt.ldR, pt.outC, pt.ldC = accR, kp, accC, kp
	}
	if kn.in.sums {
		sumR, sumC := s.sumR[:hp], s.sumC[:wp]
		clear(sumR)
		clear(sumC)
		sq := kn.fam.consumeOneHot32(t, hp, wp, kn.zero, kn.zero, sumR, sumC, diag, true)
		copy(pt.sumRows, sumR[:h])
		copy(pt.sumCols, sumC[:w])
		if !diag {
			sq *= 2
		}
		pt.frob = sq
	}
	return true
}

// packW32 copies the rows of w (stride k) into dst (stride kp), rounded to
// float32 (to nearest, as VCVTPD2PS does), with zero padding.
func packW32(dst []float32, w []float64, k, kp int) {
	rows := len(w) / k
	clear(dst[rows*kp:])
	for i := range rows {
		wi, di := w[i*k:(i+1)*k], dst[i*kp:(i+1)*kp]
		for c, v := range wi {
			di[c] = float32(v)
		}
		clear(di[k:])
	}
}

// genKernel is an assembly exponent micro-kernel (see gen8x1, gen4x1AVX2
// and dot8x8NEON).
type genKernel[F float32 | float64] func(t *F, wp int, xr, xt *F, p int, gr, gc, tg *F)

// genTile32 writes the hp×wp tile of exp(-gamma·d²) into t with family
// fam's kernels (see genTiles): hp is a multiple of 8, wp of 16.
func (fam *denseKernels) genTile32(t []float32, hp, wp int, xr, xt []float32, p int, gr, gc []float32, tg float32) {
	if fam.gen32exp != nil {
		genTiles(fam.gen32exp, fam.rows, fam.cols32, nil, t, hp, wp, xr, xt, p, gr, gc, tg)
		return
	}
	genTiles(fam.gen32, fam.rows, fam.cols32, fam.exp32, t, hp, wp, xr, xt, p, gr, gc, tg)
}

// genTiles writes t[r*wp+c] = exp(tg·(x_r·x_c) + (gc[c] + gr[r])) for the
// hp×wp tile t with the micro-kernels kernels (kernels[nv-1] covers a
// block of rows rows and nv·cols columns), 8 rows at a time, each group's
// exp while its rows are in cache. xr holds the rows' features in groups
// of 8 (packRows), xt the columns' transposed (p×wp); hp is a multiple of
// 8, wp of cols. A nil exp means the kernels take the exp themselves.
func genTiles[F float32 | float64](kernels []genKernel[F], rows, cols int, exp func([]F), t []F, hp, wp int, xr, xt []F, p int, gr, gc []F, tg F) {
	if hp == 0 || wp == 0 {
		return
	}
	if hp%8 != 0 || wp%cols != 0 || len(t) < hp*wp || len(xr) < hp*p || len(xt) < p*wp || len(gr) < hp || len(gc) < wp {
		panic("tile: genTiles called with inconsistent sizes") // a bug in this package, not bad input
	}
	for i0 := 0; i0 < hp; i0 += 8 {
		for r := i0; r < i0+8; r += rows {
			// Row r's features within its group of 8 (xr[i0*p + q*8 + r-i0]),
			// and the columns' from column j0 on: nil if p = 0, the kernels
			// then read no features.
			var xi, xj *F
			for j0 := 0; j0 < wp; {
				nv := min((wp-j0)/cols, len(kernels))
				if p > 0 {
					xi, xj = &xr[i0*p+r-i0], &xt[j0]
				}
				kernels[nv-1](&t[r*wp+j0], wp, xi, xj, p, &gr[r], &gc[j0], &tg)
				j0 += nv * cols
			}
		}
		if exp != nil {
			exp(t[i0*wp : (i0+8)*wp])
		}
	}
}

// gemmKernel is an assembly P·W micro-kernel (see gemm8x1, gemm64x8x1 and
// gemm8x8NEON).
type gemmKernel[F float32 | float64] func(y *float64, ldy int, a *F, rs, is int, b *F, ldb, inner int, add bool)

// gemmTile sets y (m×kp, stride kp) to the product of the m×inner matrix
// a[r*rs+s*is] with the inner×kp matrix b (stride kp), or adds the product
// to y if add is set; m is a multiple of rows, kp of cols. It runs the
// micro-kernels kernels[nv-1], which cover rows rows and nv·cols columns,
// on blocks of rows rows, as many columns at a time as the widest covers,
// and checks the bounds they rely on.
func gemmTile[F float32 | float64](kernels []gemmKernel[F], rows, cols int, y []float64, kp int, a []F, rs, is int, b []F, m, inner int, add bool) {
	if m == 0 {
		return
	}
	if inner == 0 {
		if !add {
			clear(y[:m*kp])
		}
		return
	}
	if m%rows != 0 || kp%cols != 0 || len(y) < m*kp || len(b) < inner*kp ||
		len(a) <= (m-1)*rs+(inner-1)*is {
		panic("tile: gemmTile called with inconsistent sizes") // a bug in this file, not bad input
	}
	nv, most := kp/cols, len(kernels)
	for r0 := 0; r0 < m; r0 += rows {
		yr, ar := y[r0*kp:], &a[r0*rs]
		for v := 0; v < nv; v += most {
			kernels[min(nv-v, most)-1](&yr[cols*v], kp, ar, rs, is, &b[cols*v], kp, inner, add)
		}
	}
}

// gemmTile32 is gemmTile with family fam's float32 micro-kernels (kp a
// multiple of fam.cols32; kernel32's is of 16).
func (fam *denseKernels) gemmTile32(y []float64, kp int, a []float32, rs, is int, b []float32, m, inner int, add bool) {
	gemmTile(fam.gemm32, fam.rows, fam.cols32, y, kp, a, rs, is, b, m, inner, add)
}

// kernel64 is the vectorized kernel of a float64 Gaussian for one pass:
// it generates every tile, and for P·W also consumes it (the gemm64
// micro-kernels, with the portable consumer's arithmetic and so its bits;
// row sums and ||P||_F^2 in scalar code); the other passes' tiles go to
// the Engine's portable consumers.
type kernel64 struct {
	fam   *denseKernels
	in    passInput
	p, bp int
	x     []float64
	g     []float64
	tg    float64
}

func newKernel64(fam *denseKernels, g *Gaussian, in passInput, b int) *kernel64 {
	pk := g.packed()
	return &kernel64{fam: fam, in: in, p: g.p, bp: roundUp(b, 8), x: pk.x64, g: pk.g64, tg: 2 * g.gamma}
}

// scratch64 is one worker's memory for kernel64.
type scratch64 struct {
	t, xr, xt, gr, gc []float64
	wr, wc            []float64 // P·W: W's rows of the tile's rows and columns, ×kp
	accR, accC        []float64 // P·W: hp×kp and wp×kp
	rows              rowPanel  // the rows xr, gr and wr hold
}

func (kn *kernel64) whole() bool { return kn.in.w != nil }

func (kn *kernel64) classMajor() bool { return false }

func (kn *kernel64) kp() int { return roundUp(kn.in.k, 8) }

func (kn *kernel64) newScratch() any {
	bp, p := kn.bp, kn.p
	s := &scratch64{t: make([]float64, bp*bp), xr: make([]float64, bp*p), xt: make([]float64, p*bp),
		gr: make([]float64, bp), gc: make([]float64, bp)}
	if kn.in.w != nil {
		kp := kn.kp()
		s.wr, s.wc = make([]float64, bp*kp), make([]float64, bp*kp)
		s.accR, s.accC = make([]float64, bp*kp), make([]float64, bp*kp)
	}
	return s
}

func (kn *kernel64) tile(scratch any, pt *partial, diag bool) bool {
	s := scratch.(*scratch64)
	r0, r1, c0, c1 := pt.r0, pt.r1, pt.c0, pt.c1
	h, w := r1-r0, c1-c0
	hp, wp := roundUp(h, 8), roundUp(w, 8)
	p := kn.p
	xr, xt := s.xr[:hp*p], s.xt[:p*wp]
	newRows := s.rows.set(r0, r1)
	packTile(xr, xt, s.gr[:hp], s.gc[:wp], kn.x, kn.g, p, 8, r0, r1, c0, c1, newRows)
	t := s.t[:hp*wp]
	inPlace := kn.in.w == nil && hp == h && wp == w && len(pt.tile) >= h*w
	if inPlace {
		// Unpadded: generate straight into the caller's tile.
		t = pt.tile[:h*w]
	}
	kn.fam.genTile64(t, hp, wp, xr, xt, p, s.gr, s.gc, kn.tg)
	if diag {
		for i := range h {
			t[i*wp+i] = 1
		}
	}
	if kn.in.w == nil {
		if !inPlace {
			for i := range h {
				copy(pt.tile[i*w:(i+1)*w], t[i*wp:])
			}
		}
		return false
	}

	// P·W: W's rows packed with stride kp (scalar), then the products
	// (vector) left in the accumulators for the commit.
	k, kp := kn.in.k, kn.kp()
	if newRows {
		packW64(s.wr[:hp*kp], kn.in.w[r0*k:r1*k], k, kp)
	}
	packW64(s.wc[:wp*kp], kn.in.w[c0*k:c1*k], k, kp)
	accR, accC := s.accR[:hp*kp], s.accC[:wp*kp]
	kn.fam.gemmTile64(accR, kp, t, wp, 1, s.wc, hp, wp)
	if !diag {
		kn.fam.gemmTile64(accC, kp, t, 1, wp, s.wr, wp, hp)
	}
	pt.outR, pt.ldR, pt.outC, pt.ldC = accR, kp, accC, kp
	if kn.in.sums {
		pt.frob = tileSums(t, h, w, wp, diag, pt.sumRows, pt.sumCols)
	}
	return true
}

// genTile64 writes the hp×wp tile of exp(-gamma·d²) into t with family
// fam's kernels, 8 rows at a time, each block's exp while its rows are in
// cache: t[r*wp+c] = exp(tg·(x_r·x_c) + (gc[c] + gr[r])) with a chain of
// fused multiply-adds in feature order; xr holds the rows' features in
// groups of 8 (packRows), xt the columns' transposed (p×wp). hp and wp
// are multiples of 8.
func (fam *denseKernels) genTile64(t []float64, hp, wp int, xr, xt []float64, p int, gr, gc []float64, tg float64) {
	genTiles(fam.gen64, fam.rows, fam.cols64, fam.exp64, t, hp, wp, xr, xt, p, gr, gc, tg)
}

// packW64 copies the rows of w (stride k) into dst (stride kp) with zero
// padding.
func packW64(dst, w []float64, k, kp int) {
	rows := len(w) / k
	for i := range rows {
		copy(dst[i*kp:], w[i*k:(i+1)*k])
		clear(dst[i*kp+k : (i+1)*kp])
	}
	clear(dst[rows*kp:])
}

// gemmTile64 sets y to the product as gemmTile does, with family fam's
// float64 micro-kernels: the portable consumer's arithmetic (see
// gemm64x8x1); kp is a multiple of 8.
func (fam *denseKernels) gemmTile64(y []float64, kp int, a []float64, rs, is int, b []float64, m, inner int) {
	gemmTile(fam.gemm64, fam.rows, fam.cols64, y, kp, a, rs, is, b, m, inner, false)
}

// rowPanel records the rows r0:r1 whose panels (packed features, g,
// classes, W's rows) a worker's scratch holds, so that the tiles of one
// block row, which a worker mostly takes one after the other, pack them
// once. The zero value holds none.
type rowPanel struct {
	r0, r1 int
	valid  bool
}

// set records rows r0:r1 as the panels' and reports whether they were
// other rows before (the panels must then be packed).
func (rp *rowPanel) set(r0, r1 int) bool {
	if rp.valid && rp.r0 == r0 && rp.r1 == r1 {
		return false
	}
	*rp = rowPanel{r0: r0, r1: r1, valid: true}
	return true
}

// packRowPanel packs the rows r0:r1 as packTile does: xr (len(gr)×p)
// their features in groups of m rows, gr their g, with zero features and
// padArg for the padding.
func packRowPanel[F float32 | float64](xr, gr, x, g []F, p, m, r0, r1 int) {
	packRows(xr, x[r0*p:r1*p], p, m)
	for i := copy(gr, g[r0:r1]); i < len(gr); i++ {
		gr[i] = padArg
	}
}

// packTile copies what the generation micro-kernels read of the tile with
// rows r0:r1 and columns c0:c1 of x (n×p) and g (-gamma·|x_i|²) into their
// panels, cut to the padded tile (hp×wp): xr (hp×p) the rows' features in
// groups of m rows (packRows), xt (p×wp) the columns' features transposed,
// gr (hp) and gc (wp) the rows' and columns' g, with zero features and
// padArg for the padding. Without rows it leaves xr and gr as they are
// (they hold these rows already).
func packTile[F float32 | float64](xr, xt, gr, gc, x, g []F, p, m, r0, r1, c0, c1 int, rows bool) {
	wp := len(gc)
	if rows {
		packRowPanel(xr, gr, x, g, p, m, r0, r1)
	}
	clear(xt)
	for j := range c1 - c0 {
		for q, v := range x[(c0+j)*p : (c0+j+1)*p] {
			xt[q*wp+j] = v
		}
	}
	for j := copy(gc, g[c0:c1]); j < wp; j++ {
		gc[j] = padArg
	}
}
