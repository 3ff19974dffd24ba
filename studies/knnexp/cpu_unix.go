//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuSeconds returns the process's user and system CPU time so far, or 0
// where getrusage fails: beside the wall time it shows how busy the
// workers were.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
