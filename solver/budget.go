package solver

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/ssnmf/ssnmf/internal/diskio"
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

// Budget is how a run shares the memory it may use: the Go heap's soft
// limit (the runtime's, debug.SetMemoryLimit), the anonymous memory of the
// kNN search's scratch (graph.KNNOptions.ScratchMemory), which the solve's
// Workspace takes over once the search is done (its matrices, or where
// they are in files, a sweep's window of P·W: Workspace.SweepWindow), and
// the rest for the mapped files' pages and the page cache. It is also the
// summary's "memory" record.
type Budget struct {
	Bytes   int64  `json:"bytes"`  // the budget; 0: none
	Source  string `json:"source"` // where it comes from: "-mem", "cgroup" or "none"
	Heap    int64  `json:"heap_bytes"`
	Scratch int64  `json:"knn_scratch_bytes"`
	// Mapped is what is left for the mapped files and the page cache; 0
	// without a budget.
	Mapped int64 `json:"mapped_bytes"`
	// GOMEMLIMIT, when set, holds the heap instead of the budget's share.
	GOMEMLIMIT bool `json:"gomemlimit,omitempty"`
	// Workspace is where the solve's n×k matrices are (Workspace):
	// "memory" when they fit in the Scratch share, which the kNN search
	// has released by then, else "files" (mapped, in the work directory);
	// empty until they are made. WorkspaceBytes is the most they take.
	Workspace      string `json:"workspace,omitempty"`
	WorkspaceBytes int64  `json:"workspace_bytes,omitempty"`
}

// ErrAboveLimit is the error of a budget above the memory cgroup's limit.
var ErrAboveLimit = errors.New("is above the memory cgroup's limit")

// NewBudget returns the budget of mem bytes (ssnmf solve's -mem; 0 if not
// given), or of the memory cgroup's limit, or, with neither, none: the
// heap unbounded and the kNN scratch half the memory available now. A mem
// above the cgroup's limit is refused with ErrAboveLimit.
func NewBudget(mem int64) (Budget, error) {
	limit := cgroupMemoryLimit()
	b := Budget{Bytes: mem, Source: "-mem"}
	switch {
	case mem > 0 && limit > 0 && mem > limit:
		return b, fmt.Errorf("%s %w of %s", diskio.Size(mem), ErrAboveLimit, diskio.Size(limit))
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

// Apply holds the Go heap of the process to the budget's share, unless
// GOMEMLIMIT says otherwise or there is no budget. Without it the
// collector lets the heap grow to twice what is live before it collects,
// which can exceed a cgroup's limit. Solve does not call it: the heap's
// limit is the process's, the caller's to set.
func (b Budget) Apply() {
	if !b.GOMEMLIMIT && b.Heap > 0 {
		debug.SetMemoryLimit(b.Heap)
	}
}

// Place records where the workspace ws is.
func (b *Budget) Place(ws *Workspace) {
	b.Workspace, b.WorkspaceBytes = "files", WorkspaceBytes(ws.N, ws.K)
	if ws.InMemory {
		b.Workspace = "memory"
	}
}

// WorkspaceString describes where the workspace is.
func (b Budget) WorkspaceString() string {
	where := "in files of the work directory"
	if b.Workspace == "memory" {
		where = "in memory"
	}
	return fmt.Sprintf("the solve's W, P·W, P·S (up to %s) %s", diskio.Size(b.WorkspaceBytes), where)
}

// String describes the budget for the run's memory line, and where the
// workspace is once it is made.
func (b Budget) String() string {
	if b.Workspace == "" {
		return b.shares()
	}
	return b.shares() + "; " + b.WorkspaceString()
}

// shares describes the budget and its shares.
func (b Budget) shares() string {
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

// ParseBytes parses a number of bytes, as -mem has it: a number with an
// optional unit, k, M, G, T for powers of 1000 (kB, MB, GB and TB alike)
// and Ki, Mi, Gi, Ti (KiB ... TiB) for powers of 1024.
func ParseBytes(v string) (int64, error) {
	num := strings.TrimRight(v, "kKMGTiB")
	unit := strings.TrimSuffix(v[len(num):], "B")
	mult, ok := map[string]float64{"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
		"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}[unit]
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !ok || err != nil || !(f >= 0) || f*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("want bytes, a number with an optional unit (kB, MB, GB, TB, or KiB, MiB, GiB, TiB), have %q", v)
	}
	return int64(f * mult), nil
}
