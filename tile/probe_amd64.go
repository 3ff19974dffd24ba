package tile

import "golang.org/x/sys/cpu"

// The loops of FMAPeak's AVX2 and AVX-512 probes (probe_amd64.s, written
// by asmgen/probe.py): n iterations of acc[i] += a·b, fused, on each of
// fmaChainsAVX2 ymm or fmaChainsAVX512 zmm vectors at acc (every lane).
// They need the instructions of their family and are called only where
// cpuHas reports them; acc must hold the chains' vectors.

// The chains of the loops, as asmgen/probe.py writes them.
const (
	fmaChainsAVX2   = 12
	fmaChainsAVX512 = 24
	fmaChainsScalar = 12
)

//go:noescape
func fmaProbeAVX2F32(n int, acc *float32, a, b float32)

//go:noescape
func fmaProbeAVX2F64(n int, acc *float64, a, b float64)

//go:noescape
func fmaProbeAVX512F32(n int, acc *float32, a, b float32)

//go:noescape
func fmaProbeAVX512F64(n int, acc *float64, a, b float64)

// vectorFMAProbe returns the FMA probe of vector family k in precision
// prec, if this architecture has one.
func vectorFMAProbe(k ISA, prec Precision) (fmaProbe, bool) {
	var p fmaProbe
	switch k {
	case ISAAVX2:
		p = fmaProbe{chains: fmaChainsAVX2, lanes: 8, f32: fmaProbeAVX2F32, f64: fmaProbeAVX2F64}
	case ISAAVX512:
		p = fmaProbe{chains: fmaChainsAVX512, lanes: 16, f32: fmaProbeAVX512F32, f64: fmaProbeAVX512F64}
	default:
		return fmaProbe{}, false
	}
	return p.in(k, prec), true
}

// fmaProbeScalarF32 and fmaProbeScalarF64 are the same loops with
// fmaChainsScalar chains of scalar FMAs (FMA3), ISAGo's probe.
//
//go:noescape
func fmaProbeScalarF32(n int, acc *float32, a, b float32)

//go:noescape
func fmaProbeScalarF64(n int, acc *float64, a, b float64)

// scalarFMAProbe returns ISAGo's probe in assembly, if the CPU has FMA.
func scalarFMAProbe() (fmaProbe, bool) {
	if !cpu.X86.HasFMA || !cpu.X86.HasAVX {
		return fmaProbe{}, false
	}
	return fmaProbe{chains: fmaChainsScalar, lanes: 1, f32: fmaProbeScalarF32, f64: fmaProbeScalarF64}, true
}
