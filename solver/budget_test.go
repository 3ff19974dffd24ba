package solver

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestNewBudget checks the shares of a given budget, and that one above
// the memory cgroup's limit is refused.
func TestNewBudget(t *testing.T) {
	limit := cgroupMemoryLimit()
	if limit > 0 && limit < 1<<30 {
		t.Skipf("the test's process is in a memory cgroup of %d bytes, below the budget tried", limit)
	}
	b, err := NewBudget(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	if b.Source != "-mem" || b.Bytes != 1<<30 || b.Scratch != 1<<28 || b.Heap+b.Scratch+b.Mapped != b.Bytes {
		t.Errorf("budget %+v, want 1 GiB split 1/2, 1/4, 1/4", b)
	}
	if s := b.String(); !strings.HasPrefix(s, "memory budget 1.07 GB (-mem)") {
		t.Errorf("String() = %q", s)
	}
	if limit > 0 {
		if _, err := NewBudget(2 * limit); !errors.Is(err, ErrAboveLimit) {
			t.Errorf("a budget of twice the cgroup's limit: error %v, want ErrAboveLimit", err)
		}
	}
}

// TestSolveMemory checks that Options.Memory places the workspace
// without changing a bit: a budget too small for it (files) and one that
// holds it (memory) give the same W.
func TestSolveMemory(t *testing.T) {
	if _, err := os.Stat(yeast); err != nil {
		t.Skipf("no %s: %v", yeast, err)
	}
	if limit := cgroupMemoryLimit(); limit > 0 && limit < 1<<30 {
		t.Skipf("the test's process is in a memory cgroup of %d bytes, below the budget tried", limit)
	}
	var ws [][]float64
	for _, mem := range []int64{1 << 10, 1 << 30} {
		dir := t.TempDir()
		res, err := Solve(context.Background(), Input{Path: yeast}, Options{Workers: 2, Memory: mem, Workdir: dir})
		if err != nil {
			t.Fatal(err)
		}
		_, err = os.Stat(dir + "/W.mat")
		if files := err == nil; files != (mem == 1<<10) {
			t.Errorf("Memory %d: W.mat in the work directory %v, want %v", mem, files, mem == 1<<10)
		}
		ws = append(ws, res.W)
	}
	if !slices.Equal(ws[0], ws[1]) {
		t.Error("the workspace in files and in memory: different W")
	}
	if _, err := Solve(context.Background(), Input{Path: yeast}, Options{Memory: -1}); err == nil || !strings.Contains(err.Error(), "Memory") {
		t.Errorf("Options.Memory -1: error %v, want one naming Memory", err)
	}
}

// ParseBytes takes powers of 1000 and of 1024 by their units, and refuses
// what is not a size.
func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"0", 0, false}, {"4k", 4000, false}, {"1.5GB", 1_500_000_000, false}, {"4GiB", 4 << 30, false}, {"512Mi", 512 << 20, false},
		{"", 0, true}, {"3x", 0, true}, {"-1G", 0, true}, {"NaN", 0, true}, {"1e30TB", 0, true},
	} {
		got, err := ParseBytes(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}
