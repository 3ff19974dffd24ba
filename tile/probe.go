package tile

import (
	"context"
	"fmt"
	"math"
	"time"

	"golang.org/x/sync/errgroup"
)

// FMAPeak measures this machine's fused multiply-add throughput in flop/s
// (two flops per FMA) with the instructions of kernel family isa, in the
// given precision, on workers goroutines at once for about d: the peak the
// family's kernels can be compared with. ISAAuto measures the widest
// family the CPU runs (the first of SupportedISAs), ISAGo scalar FMAs
// (in assembly where the CPU has them, else math.FMA); a vector family
// runs an assembly loop of independent FMA chains on full vectors
// (probe_amd64.s, probe_arm64.s), enough chains to cover the FMA latency,
// so that it is bound by throughput alone. A family
// the CPU lacks is an error (see ISA.Resolve). It returns the rate and a
// name for the instruction: "avx2 float32x8", "avx512 float32x16",
// "neon float64x2", "scalar float64".
func FMAPeak(ctx context.Context, isa ISA, prec Precision, workers int, d time.Duration) (flops float64, kind string, err error) {
	probe, err := fmaProbeOf(isa, prec)
	if err != nil {
		return 0, "", err
	}
	workers = max(workers, 1)
	const chunk = 1 << 16 // iterations between clock reads
	perIter := probe.flopsPerIter()
	rates := make([]float64, workers)
	g, gctx := errgroup.WithContext(ctx)
	for w := range workers {
		g.Go(func() error {
			run := probe.runner(prec)
			start := time.Now()
			var calls int
			for time.Since(start) < d {
				if err := gctx.Err(); err != nil {
					return err
				}
				run(chunk)
				calls++
			}
			rates[w] = float64(calls) * chunk * perIter / time.Since(start).Seconds()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, probe.kind, err
	}
	for _, r := range rates {
		flops += r
	}
	return flops, probe.kind, nil
}

// fmaProbe is the loop FMAPeak runs for one family and precision: an
// iteration issues one FMA on each of chains independent accumulators of
// lanes lanes, acc += a·b, by f32 or f64 (assembly, see asmgen/probe.py:
// a vector family's, or scalar FMAs for ISAGo), or by scalarFMA where both
// are nil.
type fmaProbe struct {
	kind          string
	chains, lanes int
	f32           func(n int, acc *float32, a, b float32)
	f64           func(n int, acc *float64, a, b float64)
}

// The operands of the probe's chains: the accumulators start at 1 and grow
// by fmaA·fmaB an iteration, which leaves them normal numbers near 1 in
// either precision however long the probe runs (no overflow, no
// subnormals to slow it down).
const fmaA, fmaB = 1.0 / 1024, 1.0 / 3000

// fmaProbeOf returns the probe of family isa (resolved: ISAAuto is the
// widest the CPU runs) in precision prec.
func fmaProbeOf(isa ISA, prec Precision) (fmaProbe, error) {
	k, err := isa.Resolve()
	if err != nil {
		return fmaProbe{}, err
	}
	if k == ISAGo {
		p, ok := scalarFMAProbe()
		if !ok {
			p = fmaProbe{chains: scalarFMAChains, lanes: 1}
		}
		p.kind = "scalar " + prec.String()
		return p, nil
	}
	p, ok := vectorFMAProbe(k, prec)
	if !ok {
		return fmaProbe{}, fmt.Errorf("tile: no FMA probe for kernel %s in this build", k)
	}
	return p, nil
}

// flopsPerIter returns the flops of one iteration of the probe's loop.
func (p fmaProbe) flopsPerIter() float64 { return float64(2 * p.chains * p.lanes) }

// runner returns a function that runs n iterations of the probe's loop on
// accumulators of its own, for one goroutine.
func (p fmaProbe) runner(prec Precision) func(n int) {
	switch {
	case p.f32 != nil && prec == Float32:
		acc := make([]float32, p.chains*p.lanes)
		for i := range acc {
			acc[i] = 1
		}
		return func(n int) { p.f32(n, &acc[0], fmaA, fmaB) }
	case p.f64 != nil && prec == Float64:
		acc := make([]float64, p.chains*p.lanes)
		for i := range acc {
			acc[i] = 1
		}
		return func(n int) { p.f64(n, &acc[0], fmaA, fmaB) }
	}
	var sink float64
	return func(n int) { sink += scalarFMA(n) }
}

// scalarFMAChains is the number of chains of scalarFMA.
const scalarFMAChains = 8

// scalarFMA runs n iterations of eight independent scalar FMA chains: the
// probe of the portable family, ISAGo, where there is no assembly one
// (scalarFMAProbe). math.FMA rounds in float64; float32 scalar FMAs issue
// at the same rate. Where the compiler cannot assume FMA (GOAMD64 v1, v2)
// it checks for it at each call and keeps the chains in memory around the
// fallback's call, which slows this loop down some 4 times: hence the
// assembly.
func scalarFMA(n int) float64 {
	a0, a1, a2, a3, a4, a5, a6, a7 := 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0
	const a, b = fmaA, fmaB
	for range n {
		a0 = math.FMA(a, b, a0)
		a1 = math.FMA(a, b, a1)
		a2 = math.FMA(a, b, a2)
		a3 = math.FMA(a, b, a3)
		a4 = math.FMA(a, b, a4)
		a5 = math.FMA(a, b, a5)
		a6 = math.FMA(a, b, a6)
		a7 = math.FMA(a, b, a7)
	}
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
}

// in returns p, given with its float32 lanes, for precision prec: half the
// lanes in float64, and its kind named after family k ("avx2 float64x4").
func (p fmaProbe) in(k ISA, prec Precision) fmaProbe {
	if prec == Float64 {
		p.lanes /= 2
	}
	p.kind = fmt.Sprintf("%s %sx%d", k, prec, p.lanes)
	return p
}
