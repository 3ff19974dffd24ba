//go:build unix

package solver

import (
	"runtime"
	"syscall"
)

// PeakRSS returns the process's peak resident set size in bytes, as
// getrusage reports it (what /usr/bin/time -v prints), or 0 if unknown.
func PeakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) // bytes there
	}
	return int64(ru.Maxrss) * 1024 // kilobytes elsewhere
}
