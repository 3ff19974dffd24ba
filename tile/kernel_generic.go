//go:build !amd64 && !arm64

package tile

// Off amd64 and arm64 there is no vectorized dense kernel: every
// pass runs the portable code.

// fastFamily reports whether there is a dense kernel of a family here:
// never.
func fastFamily(ISA) bool { return false }

// fastCapable reports whether a family's dense kernel runs a source's
// tiles on this CPU: never.
func fastCapable(ISA, Source) bool { return false }

// newFastKernel returns no kernel: there is none here.
func newFastKernel(ISA, Source, passInput, int) (fastKernel, bool) { return nil, false }

// addFloat64s sets dst[i] += src[i]; src is as long as dst.
func addFloat64s(dst, src []float64) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] += v
	}
}
