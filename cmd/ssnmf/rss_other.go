//go:build !unix

package main

// peakRSS is unknown on systems without getrusage.
func peakRSS() int64 { return 0 }
