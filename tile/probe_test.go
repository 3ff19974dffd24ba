package tile

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestFMAProbeArithmetic checks each assembly probe loop of this CPU against
// its arithmetic, computed in Go: n iterations of acc += a·b, fused, on
// every lane of every chain, from distinct starting values, and nothing
// written past the chains.
func TestFMAProbeArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tested := 0
	for _, k := range SupportedISAs() {
		if _, ok := scalarFMAProbe(); k == ISAGo && !ok {
			continue // scalarFMA, Go code
		}
		tested++
		for _, prec := range []Precision{Float32, Float64} {
			p, err := fmaProbeOf(k, prec)
			if err != nil {
				t.Fatal(err)
			}
			lanes := map[ISA]int{ISAAVX2: 8, ISAAVX512: 16, ISANEON: 4}[k]
			kind := k.String() + " " + prec.String() + "x"
			switch {
			case k == ISAGo:
				lanes, kind = 1, "scalar "+prec.String()
			case prec == Float64:
				lanes /= 2
			}
			if p.lanes != lanes || p.chains < 10 || !strings.HasPrefix(p.kind, kind) {
				t.Errorf("%s %s: probe %q with %d chains of %d lanes, want %d lanes and at least 10 chains", k, prec, p.kind, p.chains, p.lanes, lanes)
			}
			m := p.chains * p.lanes
			const guard = 64 // values past the chains, which must stay as they are
			fused := false   // whether some lane's fused result differs from the unfused one
			for _, n := range []int{0, 1, 3, 7} {
				if prec == Float32 {
					acc := make([]float32, m+guard)
					for i := range acc {
						acc[i] = float32(rng.NormFloat64())
					}
					a, b := float32(rng.NormFloat64()), float32(rng.NormFloat64())
					want := make([]float32, len(acc))
					for i, v := range acc {
						want[i] = v
						if i < m {
							u := v
							for range n {
								want[i] = fma32(a, b, want[i])
								u += float32(a * b) // the conversion rounds the product: no fusion
							}
							fused = fused || u != want[i]
						}
					}
					p.f32(n, &acc[0], a, b)
					for i := range acc {
						if acc[i] != want[i] {
							t.Fatalf("%s, n=%d: acc[%d] (chain %d, lane %d) = %v, want %v", p.kind, n, i, i/p.lanes, i%p.lanes, acc[i], want[i])
						}
					}
				} else {
					acc := make([]float64, m+guard)
					for i := range acc {
						acc[i] = rng.NormFloat64()
					}
					a, b := rng.NormFloat64(), rng.NormFloat64()
					want := make([]float64, len(acc))
					for i, v := range acc {
						want[i] = v
						if i < m {
							u := v
							for range n {
								want[i] = math.FMA(a, b, want[i])
								u += float64(a * b)
							}
							fused = fused || u != want[i]
						}
					}
					p.f64(n, &acc[0], a, b)
					for i := range acc {
						if acc[i] != want[i] {
							t.Fatalf("%s, n=%d: acc[%d] (chain %d, lane %d) = %v, want %v", p.kind, n, i, i/p.lanes, i%p.lanes, acc[i], want[i])
						}
					}
				}
			}
			if !fused {
				t.Errorf("%s: no lane tells a fused multiply-add from a rounded product and sum; the check is too weak", p.kind)
			}
		}
	}
	if tested == 0 {
		t.Skipf("no assembly probe on this CPU (%s)", CPUFeatures())
	}
}

// TestFMAPeak runs FMAPeak for each family this CPU runs and checks the
// rates are positive and each vector family's exceeds the scalar probe's.
// A vector probe issues FMAs of 2 to 16 lanes, at least as many of them
// as the scalar one (chains) and, on a real CPU, at least half as fast,
// so that holds by a wide margin; load only slows a measurement down, so
// each family's best of a few short rounds, taken in turn, is compared.
// Under an emulator (qemu-user runs the arm64 tests on amd64) vector
// instructions cost many times a scalar one and the rates say nothing of
// a CPU: there the lane counts alone are compared.
func TestFMAPeak(t *testing.T) {
	ctx := context.Background()
	isas := SupportedISAs()
	for _, k := range isas {
		for _, prec := range []Precision{Float32, Float64} {
			p, err := fmaProbeOf(k, prec)
			if err != nil {
				t.Fatal(err)
			}
			scalar, _ := fmaProbeOf(ISAGo, prec)
			// The per-iteration work: more lanes than one, as many
			// chains as the scalar probe at least.
			if k != ISAGo && (p.lanes < 2 || p.chains < scalar.chains) {
				t.Errorf("%s: %d chains of %d lanes, want at least %d of 2", p.kind, p.chains, p.lanes, scalar.chains)
			}
		}
	}
	emulated := emulatedCPU()
	if emulated != "" {
		emulated = "an " + emulated + " CPU running " + runtime.GOARCH + " code"
	}
	for _, prec := range []Precision{Float32, Float64} {
		best := map[ISA]float64{}
		for round := range 5 {
			for _, k := range isas {
				flops, kind, err := FMAPeak(ctx, k, prec, 1, 10*time.Millisecond)
				if err != nil {
					t.Fatalf("FMAPeak(%s, %s): %v", k, prec, err)
				}
				wantKind := k.String() + " " + prec.String() + "x"
				if k == ISAGo {
					wantKind = "scalar " + prec.String()
				}
				if !(flops > 0) || !strings.HasPrefix(kind, wantKind) {
					t.Fatalf("FMAPeak(%s, %s) = %g flop/s, %q; want a positive rate of %q", k, prec, flops, kind, wantKind)
				}
				best[k] = max(best[k], flops)
			}
			slower := ""
			for _, k := range isas {
				if k != ISAGo && best[k] <= best[ISAGo] {
					slower += " " + k.String()
				}
			}
			if slower == "" || emulated != "" {
				break
			}
			if round == 4 {
				t.Errorf("%s: the vector probe of%s is no faster than the scalar one: best rates %v (by family)", prec, slower, best)
			}
		}
		if emulated != "" {
			t.Logf("%s: rates %v flop/s under emulation (%s), not compared", prec, best, emulated)
		} else {
			t.Logf("%s: best rates %v flop/s", prec, best)
		}
	}
	_, auto, err := FMAPeak(ctx, ISAAuto, Float32, 1, time.Millisecond)
	if err != nil || !strings.HasPrefix(auto, isas[0].String()+" ") && isas[0] != ISAGo {
		t.Errorf("FMAPeak(auto) measured %q (err %v), want the widest family, %s", auto, err, isas[0])
	}
	for _, k := range []ISA{ISAAVX2, ISAAVX512, ISANEON} {
		if !cpuHas(k) {
			if _, _, err := FMAPeak(ctx, k, Float32, 1, time.Millisecond); err == nil {
				t.Errorf("FMAPeak(%s) on a CPU without it (%s): no error", k, CPUFeatures())
			}
		}
	}
}

// emulatedCPU returns the vendor of the CPU /proc/cpuinfo describes if it
// is an x86 one and this is not x86 code, as under qemu-user, which shows
// the host's file; "" otherwise.
func emulatedCPU() string {
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "386" {
		return ""
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, v := range []string{"GenuineIntel", "AuthenticAMD"} {
		if strings.Contains(string(b), v) {
			return v
		}
	}
	return ""
}
