//go:build amd64 || arm64

package tile

// This file holds the Go code of the vectorized dense kernel that amd64
// (dense_amd64.go, AVX-512) and arm64 (dense_arm64.go, NEON) share: the
// kernels of a pass (kernel32, kernel64), their packing (scalar) and the
// order of their phases, and the checks of the one-hot consumer. Each
// architecture's file supplies the vector phases under the same names and
// contracts: simdUsable, genTile32, genTile64, exp32Slice, exp64Slice,
// consume16, gemmTile32, gemmTile64 and addFloat64s, for tiles padded to
// multiples of 16 (float32) or 8 (float64) rows and columns and W to kp
// columns.

// flushEvery is the number of products a float32 partial sum of the P·W
// kernel holds before it is added into float64.
const flushEvery = 64

// padArg is the exponent term of padding rows and columns: their entries
// come out exactly 0.
const padArg = -1e30

func fastCapable(src Source) bool {
	_, ok := src.(*Gaussian)
	return ok && simdUsable()
}

func newFastKernel(src Source, in passInput, b int) (fastKernel, bool) {
	g, ok := src.(*Gaussian)
	if !ok || !simdUsable() {
		return nil, false
	}
	if g.prec == Float32 {
		return newKernel32(g, in, b), true
	}
	return newKernel64(g, in, b), true
}

// consumeOneHot32 adds an hp×wp float32 tile t (row-major, stride wp) to
// the class-major float64 accumulators: accR[sr... ] gets the row direction,
// accR[c*hp+i] += sum of t[i][j] over the j with sc[j] = c, and, off the
// diagonal, accC[c*wp+j] += sum of t[i][j] over the i with sr[i] = c. With
// frob it returns the sum of squares of the tile's entries.
func consumeOneHot32(t []float32, hp, wp int, sr, sc []int32, accR, accC []float64, diag, frob bool) float64 {
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
	consume16(&t[0], hp, wp, &sr[0], &sc[0], &accR[0], accC0, !diag, frob, &buf)
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
	in   passInput
	p    int
	bp   int       // tile edge rounded up to 16
	x    []float32 // centred features, n×p
	g    []float32 // -gamma·|x_i|² of the centred features
	tg   float32   // 2·gamma
	zero []int32   // bp zeros: the one class of row and column sums
}

func newKernel32(g *Gaussian, in passInput, b int) *kernel32 {
	pk := g.packed()
	return &kernel32{in: in, p: g.p, bp: roundUp(b, 16), x: pk.x32, g: pk.g32, tg: float32(2 * g.gamma), zero: make([]int32, roundUp(b, 16))}
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

	// Packing (scalar).
	xr, xt := s.xr[:hp*p], s.xt[:p*wp]
	packTile(xr, xt, s.gr[:hp], s.gc[:wp], kn.x, kn.g, p, 8, r0, r1, c0, c1)
	if kn.in.s != nil {
		copy(s.sr, kn.in.s[r0:r1])
		clear(s.sr[h:hp])
		copy(s.sc, kn.in.s[c0:c1])
		clear(s.sc[w:wp])
	}
	if kn.in.w != nil {
		kp := kn.kp()
		packW32(s.wr[:hp*kp], kn.in.w[r0*k:r1*k], k, kp)
		packW32(s.wc[:wp*kp], kn.in.w[c0*k:c1*k], k, kp)
	}

	// Generation (vector).
	t := s.t[:hp*wp]
	genTile32(t, hp, wp, xr, xt, p, s.gr, s.gc, kn.tg)
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
		consumeOneHot32(t, hp, wp, s.sr, s.sc, accR, accC, diag, false)
		pt.outR, pt.ldR, pt.outC, pt.ldC = accR, hp, accC, wp
	case kn.in.w != nil:
		kp := kn.kp()
		accR, accC := s.accR[:hp*kp], s.accC[:wp*kp]
		gemmTile32(accR, kp, t, wp, 1, s.wc, hp, wp, false)
		if !diag {
			gemmTile32(accC, kp, t, 1, wp, s.wr, wp, hp, false)
		}
		pt.outR, pt.ldR, pt.outC, pt.ldC = accR, kp, accC, kp
	}
	if kn.in.sums {
		sumR, sumC := s.sumR[:hp], s.sumC[:wp]
		clear(sumR)
		clear(sumC)
		sq := consumeOneHot32(t, hp, wp, kn.zero, kn.zero, sumR, sumC, diag, true)
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

// xtAt returns the address of xt[j], or nil if xt is empty (p = 0: the
// micro-kernels then read no features).
func xtAt(xt []float32, j int) *float32 {
	if len(xt) == 0 {
		return nil
	}
	return &xt[j]
}

// kernel64 is the vectorized kernel of a float64 Gaussian for one pass:
// it generates every tile, and for P·W also consumes it (the gemm64
// micro-kernels, with the portable consumer's arithmetic and so its bits;
// row sums and ||P||_F^2 in scalar code); the other passes' tiles go to
// the Engine's portable consumers.
type kernel64 struct {
	in    passInput
	p, bp int
	x     []float64
	g     []float64
	tg    float64
}

func newKernel64(g *Gaussian, in passInput, b int) *kernel64 {
	pk := g.packed()
	return &kernel64{in: in, p: g.p, bp: roundUp(b, 8), x: pk.x64, g: pk.g64, tg: 2 * g.gamma}
}

// scratch64 is one worker's memory for kernel64.
type scratch64 struct {
	t, xr, xt, gr, gc []float64
	wr, wc            []float64 // P·W: W's rows of the tile's rows and columns, ×kp
	accR, accC        []float64 // P·W: hp×kp and wp×kp
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
	packTile(xr, xt, s.gr[:hp], s.gc[:wp], kn.x, kn.g, p, 8, r0, r1, c0, c1)
	t := s.t[:hp*wp]
	inPlace := kn.in.w == nil && hp == h && wp == w && len(pt.tile) >= h*w
	if inPlace {
		// Unpadded: generate straight into the caller's tile.
		t = pt.tile[:h*w]
	}
	genTile64(t, hp, wp, xr, xt, p, s.gr, s.gc, kn.tg)
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
	packW64(s.wr[:hp*kp], kn.in.w[r0*k:r1*k], k, kp)
	packW64(s.wc[:wp*kp], kn.in.w[c0*k:c1*k], k, kp)
	accR, accC := s.accR[:hp*kp], s.accC[:wp*kp]
	gemmTile64(accR, kp, t, wp, 1, s.wc, hp, wp)
	if !diag {
		gemmTile64(accC, kp, t, 1, wp, s.wr, wp, hp)
	}
	pt.outR, pt.ldR, pt.outC, pt.ldC = accR, kp, accC, kp
	if kn.in.sums {
		pt.frob = tileSums(t, h, w, wp, diag, pt.sumRows, pt.sumCols)
	}
	return true
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

// packTile copies what the generation micro-kernels read of the tile with
// rows r0:r1 and columns c0:c1 of x (n×p) and g (-gamma·|x_i|²) into their
// panels, cut to the padded tile (hp×wp): xr (hp×p) the rows' features in
// groups of m rows (packRows), xt (p×wp) the columns' features transposed,
// gr (hp) and gc (wp) the rows' and columns' g, with zero features and
// padArg for the padding.
func packTile[F float32 | float64](xr, xt, gr, gc, x, g []F, p, m, r0, r1, c0, c1 int) {
	wp := len(gc)
	packRows(xr, x[r0*p:r1*p], p, m)
	for i := copy(gr, g[r0:r1]); i < len(gr); i++ {
		gr[i] = padArg
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
