package tile

// The loops of FMAPeak's NEON probe (probe_arm64.s, written by
// asmgen/probe.py): n iterations of acc[i] += a·b, fused (FMLA), on each of
// fmaChainsNEON 128-bit vectors at acc (every lane); acc must hold them.

// The chains of the loops, as asmgen/probe.py writes them.
const (
	fmaChainsNEON   = 24
	fmaChainsScalar = 12
)

//go:noescape
func fmaProbeNEONF32(n int, acc *float32, a, b float32)

//go:noescape
func fmaProbeNEONF64(n int, acc *float64, a, b float64)

// vectorFMAProbe returns the FMA probe of vector family k in precision
// prec, if this architecture has one.
func vectorFMAProbe(k ISA, prec Precision) (fmaProbe, bool) {
	if k != ISANEON {
		return fmaProbe{}, false
	}
	p := fmaProbe{chains: fmaChainsNEON, lanes: 4, f32: fmaProbeNEONF32, f64: fmaProbeNEONF64}
	return p.in(k, prec), true
}

// fmaProbeScalarF32 and fmaProbeScalarF64 are the same loops with
// fmaChainsScalar chains of scalar FMAs (FMADD), ISAGo's probe.
//
//go:noescape
func fmaProbeScalarF32(n int, acc *float32, a, b float32)

//go:noescape
func fmaProbeScalarF64(n int, acc *float64, a, b float64)

// scalarFMAProbe returns ISAGo's probe in assembly: every arm64 CPU has
// scalar FMA.
func scalarFMAProbe() (fmaProbe, bool) {
	return fmaProbe{chains: fmaChainsScalar, lanes: 1, f32: fmaProbeScalarF32, f64: fmaProbeScalarF64}, true
}
