//go:build unix

package tile

import (
	"syscall"
	"time"
)

// processCPU returns the user and system CPU time the process has used so
// far, summed over its threads, or 0 if the system does not say.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
