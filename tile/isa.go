package tile

import (
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"

	"github.com/ssnmf/ssnmf/internal/enum"
)

// ISA names a family of kernels by the vector instructions they use. The
// kernels are chosen at run time from the CPU's features (ISAAuto), or
// forced, for tests and benchmarks; every one of them gives the same
// answers as the portable kernel, ISAGo, to rounding, and the kNN screen
// (Pairs) the same bits.
type ISA int

// The kernel families.
const (
	// ISAAuto is the best family this CPU can run: the first of
	// SupportedISAs.
	ISAAuto ISA = iota
	// ISAGo is the portable pure-Go code, on every CPU.
	ISAGo
	// ISAAVX2 is amd64 assembly with AVX2 and FMA (8 float32 lanes).
	ISAAVX2
	// ISAAVX512 is amd64 assembly with AVX-512F (16 float32 lanes).
	ISAAVX512
	// ISANEON is arm64 assembly with Advanced SIMD (4 float32 lanes).
	ISANEON
)

var isaNames = [...]string{"auto", "go", "avx2", "avx512", "neon"}

// String returns the name -kernel takes: auto, go, avx2, avx512 or neon.
func (k ISA) String() string { return enum.Name(isaNames[:], k, "ISA") }

// ParseISA parses a kernel family's name, as String writes it.
func ParseISA(s string) (ISA, error) {
	return enum.Parse[ISA](isaNames[:], strings.ToLower(s), "kernel")
}

// cpuHas reports whether this CPU (and its operating system, which must
// save the vector registers) runs family k's instructions.
func cpuHas(k ISA) bool {
	switch k {
	case ISAGo:
		return true
	case ISAAVX2:
		return runtime.GOARCH == "amd64" && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	case ISAAVX512:
		return runtime.GOARCH == "amd64" && cpu.X86.HasAVX512F && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	case ISANEON:
		return runtime.GOARCH == "arm64" && cpu.ARM64.HasASIMD
	}
	return false
}

// SupportedISAs returns the families this CPU runs, fastest first; the
// last is always ISAGo.
func SupportedISAs() []ISA {
	var out []ISA
	for _, k := range []ISA{ISAAVX512, ISAAVX2, ISANEON, ISAGo} {
		if cpuHas(k) {
			out = append(out, k)
		}
	}
	return out
}

// Resolve returns the family k stands for on this CPU: the fastest one
// for ISAAuto, k itself if the CPU runs it, and otherwise an error that
// names the CPU's vector features.
func (k ISA) Resolve() (ISA, error) {
	switch {
	case k == ISAAuto:
		return SupportedISAs()[0], nil
	case k < ISAAuto || int(k) >= len(isaNames):
		return 0, fmt.Errorf("tile: unknown kernel %d", int(k))
	case !cpuHas(k):
		return 0, fmt.Errorf("this CPU (%s) lacks the %s kernels; it runs %s", CPUFeatures(), k, isaList(SupportedISAs()))
	}
	return k, nil
}

// Fallback returns k if this CPU runs it, else the fastest family it
// does run, and whether that is a change: how a resumed run or a worker
// on another machine goes on with the kernel a run recorded.
func (k ISA) Fallback() (ISA, bool) {
	if r, err := k.Resolve(); err == nil {
		return r, false
	}
	return SupportedISAs()[0], true
}

// CPUFeatures describes this CPU's vector features that the kernels use,
// for messages: the architecture and the features present, such as
// "amd64: avx2 fma avx512f".
func CPUFeatures() string {
	var have []string
	switch runtime.GOARCH {
	case "amd64":
		for _, f := range []struct {
			name string
			ok   bool
		}{{"avx", cpu.X86.HasAVX}, {"avx2", cpu.X86.HasAVX2}, {"fma", cpu.X86.HasFMA}, {"avx512f", cpu.X86.HasAVX512F}} {
			if f.ok {
				have = append(have, f.name)
			}
		}
	case "arm64":
		if cpu.ARM64.HasASIMD {
			have = append(have, "asimd")
		}
	}
	if len(have) == 0 {
		have = append(have, "no vector features the kernels use")
	}
	return runtime.GOARCH + ": " + strings.Join(have, " ")
}

func isaList(ks []ISA) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = k.String()
	}
	return strings.Join(s, ", ")
}
