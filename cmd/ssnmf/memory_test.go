package main

import (
	"strings"
	"testing"
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

// TestMemoryBudgetMem checks the shares of a -mem budget, and -mem on the
// command line: in the summary, and refused when it is not a size.
func TestMemoryBudgetMem(t *testing.T) {
	if limit := cgroupMemoryLimit(); limit > 0 && limit < 1<<30 {
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
