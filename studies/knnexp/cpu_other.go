//go:build !unix

package main

// cpuSeconds returns 0 where there is no getrusage (cpu_unix.go).
func cpuSeconds() float64 { return 0 }
