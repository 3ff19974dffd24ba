//go:build !unix

package solver

// PeakRSS is unknown on systems without getrusage.
func PeakRSS() int64 { return 0 }
