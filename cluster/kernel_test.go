package cluster

import (
	"runtime"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/tile"
)

// TestKernelFamily checks the kernel family a run directory records: read
// back by Open, refused if unknown, run as recorded where the CPU has it,
// and otherwise replaced by the fastest family the CPU runs, with a note.
func TestKernelFamily(t *testing.T) {
	lacking := "neon" // a family this CPU cannot run
	if runtime.GOARCH != "amd64" {
		lacking = "avx2"
	}
	best := tile.SupportedISAs()[0]
	x := []float64{0, 1, 2, 3, 4, 5}
	for _, tc := range []struct {
		family string
		want   tile.ISA
		note   bool
		bad    bool
	}{
		{family: "", want: best},
		{family: "go", want: tile.ISAGo},
		{family: best.String(), want: best},
		{family: lacking, want: best, note: true},
		{family: "avx3", bad: true},
	} {
		spec := Spec{Kernel: KNN, N: 3, P: 2, BlockSize: 2, Neighbors: 2, Weights: "connectivity", Family: tc.family}
		path := t.TempDir()
		_, err := Create(vfs.OS{}, path, spec, x)
		if tc.bad {
			if err == nil {
				t.Errorf("family %q: no error", tc.family)
			}
			continue
		}
		if err != nil {
			t.Fatalf("family %q: %v", tc.family, err)
		}
		d, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Spec.knnOptions(1).Kernel; got != tc.want {
			t.Errorf("family %q: the tasks run %v, want %v", tc.family, got, tc.want)
		}
		if e, err := (&Spec{N: 3, P: 2, BlockSize: 2, Gamma: 1, Precision: "float64", Family: tc.family}).engine(x, 1); err != nil || e.ISA != tc.want {
			t.Errorf("family %q: engine %v (%v), want %v", tc.family, e, err, tc.want)
		}
		note := d.KernelNote()
		if (note != "") != tc.note || tc.note && !strings.Contains(note, tc.want.String()) {
			t.Errorf("family %q: note %q", tc.family, note)
		}
	}
}
