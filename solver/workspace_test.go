package solver

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWorkspacePlacement makes a workspace in each placement and checks
// where its matrices are, that they start at zero, the window of its
// sweeps, and that KeepBest and InputOrder give the same values in either.
func TestWorkspacePlacement(t *testing.T) {
	const n, k = 5, 3
	order := []int32{3, 0, 4, 1, 2}
	var want []float64
	for _, tc := range []struct {
		name     string
		memory   int64
		inMemory bool
	}{
		{"no memory granted", 0, false},
		{"one byte short", WorkspaceBytes(n, k) - 1, false},
		{"just enough", WorkspaceBytes(n, k), true},
		{"plenty", 1 << 30, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ws, err := NewWorkspace(dir, n, k, tc.memory)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			if ws.InMemory != tc.inMemory {
				t.Fatalf("InMemory = %v, want %v", ws.InMemory, tc.inMemory)
			}
			if win := ws.SweepWindow(); tc.inMemory && win != 0 || !tc.inMemory && win < minWindow {
				t.Errorf("SweepWindow = %d, want 0 in memory, else at least %d", win, minWindow)
			}
			for _, m := range [][]float64{ws.W, ws.PW, ws.PS} {
				if len(m) != n*k || slices.ContainsFunc(m, func(v float64) bool { return v != 0 }) {
					t.Fatalf("a new matrix holds %v, want %d zeros", m, n*k)
				}
			}
			for i := range ws.W {
				ws.W[i] = float64(i)
			}
			if err := ws.KeepBest(); err != nil {
				t.Fatal(err)
			}
			w, err := ws.InputOrder(order)
			if err != nil {
				t.Fatal(err)
			}
			got := append(slices.Clone(ws.Best), w...)
			if want == nil {
				want = got
			} else if !slices.Equal(got, want) {
				t.Errorf("best and W in the input's order %v, want %v as in files", got, want)
			}
			_, err = os.Stat(filepath.Join(dir, "W.mat"))
			if files := err == nil; files == tc.inMemory {
				t.Errorf("W.mat in the work directory: %v, want %v", files, !tc.inMemory)
			}
		})
	}
}

// TestWorkspaceClear checks that a new run in memory clears the matrix
// files an earlier run in files left in the work directory, with its
// checkpoint.
func TestWorkspaceClear(t *testing.T) {
	dir := t.TempDir()
	old, err := NewWorkspace(dir, 4, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.KeepBest(); err != nil {
		t.Fatal(err)
	}
	old.Close()
	if err := os.WriteFile(old.CheckpointPath(), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := NewWorkspace(dir, 4, 2, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if had, err := ws.Clear(); !had || err != nil {
		t.Fatalf("Clear() = %v, %v; want true, nil", had, err)
	}
	left, err := os.ReadDir(dir)
	if err != nil || len(left) != 0 {
		t.Errorf("the work directory holds %v (%v), want nothing", left, err)
	}
}

// MakeWorkdir makes a missing directory, keeps one that is there, and
// makes a temporary one, absolute, in the parent given.
func TestMakeWorkdir(t *testing.T) {
	parent := t.TempDir()
	for _, tc := range []struct {
		name, dir string
		temp      bool
	}{
		{"missing", filepath.Join(parent, "a", "b"), false},
		{"there", parent, false},
		{"temporary", "", true},
	} {
		dir, temp, err := MakeWorkdir(tc.dir, parent)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || temp != tc.temp || !filepath.IsAbs(dir) {
			t.Errorf("%s: %s (temp %v): %v", tc.name, dir, temp, err)
		}
		if tc.temp && filepath.Dir(dir) != parent {
			t.Errorf("%s: %s is not in %s", tc.name, dir, parent)
		}
	}
	if _, _, err := MakeWorkdir("", filepath.Join(parent, "none")); err == nil || !strings.HasPrefix(err.Error(), "work directory: ") {
		t.Errorf("a temporary directory in a missing parent: %v", err)
	}
}
