package main

import (
	"strconv"

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

// byteSize is a flag's number of bytes (solver.ParseBytes).
type byteSize int64

func (s *byteSize) String() string { return strconv.FormatInt(int64(*s), 10) }

// Set parses v.
func (s *byteSize) Set(v string) error {
	b, err := solver.ParseBytes(v)
	if err != nil {
		return err
	}
	*s = byteSize(b)
	return nil
}
