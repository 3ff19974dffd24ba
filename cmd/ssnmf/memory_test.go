package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/solver"
)

func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"0", 0, false}, {"4096", 4096, false}, {"4k", 4000, false}, {"4kB", 4000, false},
		{"1.5GB", 1_500_000_000, false}, {"2G", 2_000_000_000, false}, {"4GiB", 4 << 30, false},
		{"512Mi", 512 << 20, false}, {"1TiB", 1 << 40, false},
		{"", 0, true}, {"3x", 0, true}, {"-1G", 0, true}, {"GB", 0, true}, {"NaN", 0, true}, {"1e30TB", 0, true}, {"4iB", 0, true},
	} {
		var b byteSize
		err := b.Set(tc.in)
		if (err != nil) != tc.err || (err == nil && int64(b) != tc.want) {
			t.Errorf("Set(%q) = %d, %v; want %d, error %v", tc.in, b, err, tc.want, tc.err)
		}
	}
}

// cgroupLimit returns the memory cgroup's limit of the test's process, 0
// if none.
func cgroupLimit() int64 {
	if b, err := solver.NewBudget(0); err == nil && b.Source == "cgroup" {
		return b.Bytes
	}
	return 0
}

// TestMemoryBudgetMem checks the shares of a -mem budget, and -mem on the
// command line: in the summary, and refused when it is not a size.
func TestMemoryBudgetMem(t *testing.T) {
	if limit := cgroupLimit(); limit > 0 && limit < 1<<30 {
		t.Skipf("the test's process is in a memory cgroup of %d bytes, below the budget tried", limit)
	}
	b, err := newMemoryBudget(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	if b.Source != "-mem" || b.Bytes != 1<<30 || b.Scratch != 1<<28 || b.Heap+b.Scratch+b.Mapped != b.Bytes {
		t.Errorf("budget %+v, want -mem's 1 GiB split 1/2, 1/4, 1/4", b)
	}
	if !b.GOMEMLIMIT && b.Heap != 1<<29 {
		t.Errorf("heap %d, want half the budget", b.Heap)
	}
	if s := b.String(); !strings.HasPrefix(s, "memory budget 1.07 GB (-mem)") {
		t.Errorf("String() = %q", s)
	}
	testUsage(t, []string{"solve"}, []usageCase{
		{name: "not a size", args: []string{"-mem", "lots"}, want: `invalid value "lots" for flag -mem`},
	})
}

// TestWorkspaceSameBits runs one solve (two starts, the approximate
// search, whose order of the rows W is put back from) with its workspace
// in memory and in files (by -mem: 4 MB grants its 594 kB, 1 MB does
// not): W, the objective and the trace are the same bits, and stderr and
// the summary say where the workspace was.
func TestWorkspaceSameBits(t *testing.T) {
	if limit := cgroupLimit(); limit > 0 && limit < 4e6 {
		t.Skipf("the test's process is in a memory cgroup of %d bytes, below the budget tried", limit)
	}
	t.Setenv("GOMEMLIMIT", "off") // -mem's heap limit would hold the whole test process
	dir := t.TempDir()
	var want []string
	for _, tc := range []struct{ mem, where, line string }{
		{"4MB", "memory", "in memory"},
		{"1MB", "files", "in files of the work directory"},
	} {
		out, sum, tr := filepath.Join(dir, tc.where+".csv"), filepath.Join(dir, tc.where+".json"), filepath.Join(dir, tc.where+".trace.csv")
		code, _, stderr := ssnmf(t, "solve", "-knn", "approx", "-mem", tc.mem, "-out", out, "-summary", sum, "-trace", tr)
		if code != 0 {
			t.Fatalf("-mem %s: exit %d: %s", tc.mem, code, stderr)
		}
		if !strings.Contains(stderr, "ssnmf: the solve's W, P·W, P·S (up to 594 kB) "+tc.line+"\n") {
			t.Errorf("-mem %s: stderr %q does not say the workspace is %s (on a line after the budget's, printed during the search)", tc.mem, stderr, tc.line)
		}
		var s struct {
			Memory    solver.Budget
			Objective float64
		}
		b, err := os.ReadFile(sum)
		if err == nil {
			err = json.Unmarshal(b, &s)
		}
		if err != nil {
			t.Fatal(err)
		}
		if s.Memory.Workspace != tc.where || s.Memory.WorkspaceBytes != 593600 {
			t.Errorf("-mem %s: the summary's workspace %q, %d bytes; want %q, 593600", tc.mem, s.Memory.Workspace, s.Memory.WorkspaceBytes, tc.where)
		}
		got := []string{strconv.FormatUint(math.Float64bits(s.Objective), 16), string(readFiles(t, out)[out])}
		head, rows := readCSV(t, tr)
		for _, r := range rows { // all but the seconds
			got = append(got, strings.Join(slices.Delete(r, slices.Index(head, "seconds"), slices.Index(head, "seconds")+1), ","))
		}
		if want == nil {
			want = got
		} else if !slices.Equal(got, want) {
			t.Errorf("-mem %s: W, the objective or the trace differ from the run in memory", tc.mem)
		}
	}
}
