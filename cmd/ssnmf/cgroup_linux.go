package main

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// heapShare is the share of a memory cgroup's limit that the Go heap is
// held to: the rest is for the pages of the mapped files (features, P, W),
// which the kernel counts against the same limit but can write back and
// drop, where it can only kill a process whose heap outgrows the limit.
const heapShare = 0.5

// fitHeapToCgroup holds the Go heap to heapShare of the memory limit of
// the cgroup the process runs in (as a batch system such as Slurm sets
// it), by the Go runtime's soft memory limit, unless GOMEMLIMIT says
// otherwise. Without it the collector lets the heap grow to twice what is
// live before it collects, which can exceed the limit. It returns the
// limit found, 0 if none.
func fitHeapToCgroup() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	limit := cgroupMemoryLimit()
	if limit > 0 {
		debug.SetMemoryLimit(int64(heapShare * float64(limit)))
	}
	return limit
}

// cgroupMemoryLimit returns the memory limit of the process's cgroup
// (v2 memory.max, or v1 memory.limit_in_bytes), 0 if it has none or it
// cannot be read.
func cgroupMemoryLimit() int64 {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			file = filepath.Join("/sys/fs/cgroup", parts[2], "memory.max")
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			file = filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes")
		default:
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		// v1 says "no limit" with a huge number, v2 with "max".
		if err == nil && v > 0 && v < math.MaxInt64/2 {
			return v
		}
	}
	return 0
}

// scratchMemory returns the bytes of anonymous memory a kNN search may
// keep its scratch in (graph.KNNOptions.ScratchMemory) before it puts the
// rest in files: a quarter of the memory cgroup's limit, if the process
// is in one (the heap is held to half of it, and the mapped files' pages
// need the rest), else half the memory available (MemAvailable) now.
func scratchMemory() int64 {
	if limit := cgroupMemoryLimit(); limit > 0 {
		return limit / 4
	}
	return memAvailable() / 2
}

// memAvailable returns /proc/meminfo's MemAvailable in bytes, 0 if it
// cannot be read.
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			if f := strings.Fields(rest); len(f) == 2 && f[1] == "kB" {
				if v, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return v << 10
				}
			}
		}
	}
	return 0
}
