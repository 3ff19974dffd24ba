//go:build !amd64 && !arm64

package tile

// Off amd64 and arm64 there is no vectorized dense kernel: every
// pass runs the portable code.

const (
	simdName = "none"
	denseISA = ISAGo
)

func simdUsable() bool { return false }

func fastFamily(ISA) bool { return false }

func fastCapable(Source) bool { return false }

func newFastKernel(Source, passInput, int) (fastKernel, bool) { return nil, false }

// addFloat64s sets dst[i] += src[i]; src is as long as dst.
func addFloat64s(dst, src []float64) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] += v
	}
}
