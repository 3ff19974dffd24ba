package main

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/ssnmf/ssnmf/internal/diskio"
	"github.com/ssnmf/ssnmf/solver"
)

// heapShare is the share of a memory budget that the Go heap is held to,
// and scratchShare the share the kNN search may keep in anonymous memory:
// the rest is for the pages of the mapped files (features, P, W) and the
// page cache, which the kernel counts against a cgroup's limit but can
// write back and drop, where it can only kill a process whose heap
// outgrows the limit.
const (
	heapShare    = 0.5
	scratchShare = 0.25
)

// memoryBudget is how a run shares the memory it may use: the Go heap's
// soft limit (the runtime's, debug.SetMemoryLimit), the anonymous memory of
// the kNN search's scratch (graph.KNNOptions.ScratchMemory), and the rest
// for the mapped files' pages and the page cache.
type memoryBudget struct {
	Bytes   int64  `json:"bytes"`  // the budget; 0: none
	Source  string `json:"source"` // where it comes from: "-mem", "cgroup" or "none"
	Heap    int64  `json:"heap_bytes"`
	Scratch int64  `json:"knn_scratch_bytes"`
	// Mapped is what is left for the mapped files and the page cache; 0
	// without a budget.
	Mapped int64 `json:"mapped_bytes"`
	// GOMEMLIMIT, when set, holds the heap instead of the budget's share.
	GOMEMLIMIT bool `json:"gomemlimit,omitempty"`
	// Workspace is where the solve's n×k matrices are (solver.Workspace):
	// "memory" when they fit in the Scratch share, which the kNN search
	// has released by then, else "files" (mapped, in the work directory);
	// empty until they are made. WorkspaceBytes is the most they take.
	Workspace      string `json:"workspace,omitempty"`
	WorkspaceBytes int64  `json:"workspace_bytes,omitempty"`
}

// newMemoryBudget returns the budget of -mem (bytes, 0 if not given), or
// of the memory cgroup's limit, or, with neither, none: the heap unbounded
// and the kNN scratch half the memory available now. A -mem above the
// cgroup's limit is refused.
func newMemoryBudget(mem int64) (memoryBudget, error) {
	limit := cgroupMemoryLimit()
	b := memoryBudget{Bytes: mem, Source: "-mem"}
	switch {
	case mem > 0 && limit > 0 && mem > limit:
		return b, usagef("-mem %s is above the memory cgroup's limit of %s", diskio.Size(mem), diskio.Size(limit))
	case mem == 0 && limit > 0:
		b.Bytes, b.Source = limit, "cgroup"
	case mem == 0:
		b.Source = "none"
		b.Scratch = memAvailable() / 2
	}
	if b.Bytes > 0 {
		b.Heap = int64(heapShare * float64(b.Bytes))
		b.Scratch = int64(scratchShare * float64(b.Bytes))
		b.Mapped = b.Bytes - b.Heap - b.Scratch
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		b.GOMEMLIMIT = true
		if v := debug.SetMemoryLimit(-1); v < math.MaxInt64 {
			b.Heap = v
		}
	}
	return b, nil
}

// apply holds the Go heap to the budget's share, unless GOMEMLIMIT says
// otherwise or there is no budget. Without it the collector lets the heap
// grow to twice what is live before it collects, which can exceed a
// cgroup's limit.
func (b memoryBudget) apply() {
	if !b.GOMEMLIMIT && b.Heap > 0 {
		debug.SetMemoryLimit(b.Heap)
	}
}

// placeWorkspace records where the workspace ws is: in the budget, for
// the summary and for the budget's line if it is not printed yet, or else
// in a line of its own.
func (kc *kernelConfig) placeWorkspace(ws *solver.Workspace) {
	kc.budget.Workspace, kc.budget.WorkspaceBytes = "files", solver.WorkspaceBytes(ws.N, ws.K)
	if ws.InMemory {
		kc.budget.Workspace = "memory"
	}
	if kc.budgetShown && !kc.quiet && kc.log != nil {
		kc.log(kc.budget.workspaceString())
	}
}

// workspaceString describes where the workspace is.
func (b memoryBudget) workspaceString() string {
	where := "in files of the work directory"
	if b.Workspace == "memory" {
		where = "in memory"
	}
	return fmt.Sprintf("the solve's W, P·W, P·S (up to %s) %s", diskio.Size(b.WorkspaceBytes), where)
}

// String describes the budget for the run's memory line, and where the
// workspace is once it is made.
func (b memoryBudget) String() string {
	if b.Workspace == "" {
		return b.shares()
	}
	return b.shares() + "; " + b.workspaceString()
}

// shares describes the budget and its shares.
func (b memoryBudget) shares() string {
	heap := "unbounded"
	if b.Heap > 0 {
		heap = diskio.Size(b.Heap)
	}
	if b.GOMEMLIMIT {
		heap += " (GOMEMLIMIT)"
	}
	if b.Bytes == 0 {
		return fmt.Sprintf("no memory budget (no -mem, no memory cgroup limit): Go heap %s, kNN scratch in memory %s (half the memory available), the rest in files", heap, diskio.Size(b.Scratch))
	}
	from := "-mem"
	if b.Source == "cgroup" {
		from = "the memory cgroup's limit"
	}
	return fmt.Sprintf("memory budget %s (%s): Go heap %s, kNN scratch in memory %s, mapped files and page cache %s", diskio.Size(b.Bytes), from, heap, diskio.Size(b.Scratch), diskio.Size(b.Mapped))
}

// byteSize is a flag's number of bytes: an integer with an optional unit,
// k, M, G, T for powers of 1000 (kB, MB, GB and TB alike) and Ki, Mi, Gi,
// Ti (KiB ... TiB) for powers of 1024.
type byteSize int64

func (s *byteSize) String() string { return strconv.FormatInt(int64(*s), 10) }

// Set parses v.
func (s *byteSize) Set(v string) error {
	num := strings.TrimRight(v, "kKMGTiB")
	unit := strings.TrimSuffix(v[len(num):], "B")
	mult, ok := map[string]float64{"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
		"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}[unit]
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !ok || err != nil || !(f >= 0) || f*mult >= math.MaxInt64 {
		return fmt.Errorf("want bytes, a number with an optional unit (kB, MB, GB, TB, or KiB, MiB, GiB, TiB), have %q", v)
	}
	*s = byteSize(f * mult)
	return nil
}
