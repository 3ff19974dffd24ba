package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ssnmf/ssnmf/solver"
)

// placeWorkspace records where the workspace ws is: in the budget, for
// the summary and for the budget's line if it is not printed yet, or else
// in a line of its own.
func (kc *kernelConfig) placeWorkspace(ws *solver.Workspace) {
	kc.budget.Place(ws)
	if kc.budgetShown && !kc.quiet && kc.log != nil {
		kc.log(kc.budget.WorkspaceString())
	}
}

// newMemoryBudget is solver.NewBudget of -mem, a budget above the memory
// cgroup's limit a usage error.
func newMemoryBudget(mem int64) (solver.Budget, error) {
	b, err := solver.NewBudget(mem)
	if err != nil {
		return b, usagef("-mem %v", err)
	}
	return b, nil
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
