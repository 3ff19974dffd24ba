package main

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/tile"
)

// TestKernelFlag checks -kernel and $SSNMF_KERNEL: a family the CPU runs
// runs and is named in the run line and the summary, a family it lacks or
// an unknown name is a one-line error naming the flag (or the variable)
// and the CPU's features, and the kNN graph is the same with every family.
func TestKernelFlag(t *testing.T) {
	dir := t.TempDir()
	lacking := "neon"
	if runtime.GOARCH != "amd64" {
		lacking = "avx512"
	}
	var objective float64
	for i, isa := range tile.SupportedISAs() {
		sum := filepath.Join(dir, isa.String()+".json")
		code, _, stderr := ssnmf(t, "solve", "-kernel", isa.String(), "-max-iter", "5", "-starts", "1", "-summary", sum)
		if code != exitOK {
			t.Fatalf("-kernel %s: exit %d: %s", isa, code, stderr)
		}
		want := isa.String() + "/float32"
		if isa == tile.ISAGo {
			want = "go/float64"
		}
		if !strings.Contains(stderr, "knn-kernel="+want+" ") {
			t.Errorf("-kernel %s: the run line does not name knn-kernel=%s:\n%s", isa, want, stderr)
		}
		s := readSummary(t, sum)
		if s.KernelFamily != isa.String() || s.KNNKernel != want {
			t.Errorf("-kernel %s: summary kernel_family %q knn_kernel %q", isa, s.KernelFamily, s.KNNKernel)
		}
		if i > 0 && s.Objective != objective {
			t.Errorf("-kernel %s: objective %v, %s gave %v", isa, s.Objective, tile.SupportedISAs()[0], objective)
		}
		objective = s.Objective
	}
	for _, tc := range []struct {
		args []string
		env  string
		want []string
	}{
		{args: []string{"-kernel", lacking}, want: []string{"-kernel " + lacking + ":", "lacks the " + lacking + " kernels", runtime.GOARCH + ":"}},
		{args: []string{"-kernel", "avx3"}, want: []string{"-kernel", `unknown kernel "avx3"`}},
		{env: lacking, want: []string{"SSNMF_KERNEL=" + lacking + ":", "lacks"}},
		{env: "fast", want: []string{"$SSNMF_KERNEL:", `unknown kernel "fast"`}},
	} {
		t.Setenv(kernelEnv, tc.env)
		code, _, stderr := ssnmf(t, append([]string{"solve", "-q", "-max-iter", "1"}, tc.args...)...)
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%v %s=%s: exit %d: %s", tc.args, kernelEnv, tc.env, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v %s=%s: %q lacks %q", tc.args, kernelEnv, tc.env, stderr, w)
			}
		}
	}
}

// TestResumeOtherKernel checks that a run resumed with other kernels than
// its checkpoint's run says so in one line and names both families in its
// summary.
func TestResumeOtherKernel(t *testing.T) {
	best := tile.SupportedISAs()[0]
	if best == tile.ISAGo {
		t.Skipf("this CPU (%s) runs no vector kernel", tile.CPUFeatures())
	}
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	if code, _, stderr := ssnmf(t, append(rowcdResumeArgs(work), "-kernel", "go", "-max-iter", "3")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sum := filepath.Join(dir, "s.json")
	code, _, stderr := ssnmf(t, "solve", "-resume", work, "-kernel", "auto", "-max-iter", "6", "-summary", sum)
	if code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if want := "the checkpoint's run ran the go kernels; this CPU (" + tile.CPUFeatures() + ") runs " + best.String(); !strings.Contains(stderr, want) {
		t.Errorf("resume: stderr %q lacks %q", stderr, want)
	}
	if s := readSummary(t, sum); s.KernelFamily != best.String() || s.CheckpointKernelFamily != "go" {
		t.Errorf("resume: summary kernel_family %q checkpoint_kernel_family %q", s.KernelFamily, s.CheckpointKernelFamily)
	}
}
