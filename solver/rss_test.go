//go:build linux

package solver

import "testing"

// PeakRSS reports at least the memory this test has touched.
func TestPeakRSS(t *testing.T) {
	b := make([]byte, 8<<20)
	for i := range b {
		b[i] = 1
	}
	if got := PeakRSS(); got < int64(len(b)) {
		t.Errorf("PeakRSS() = %d, below the %d bytes touched", got, len(b))
	}
}
