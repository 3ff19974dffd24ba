package model

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openCopy copies the golden model to a new file and opens it.
func openCopy(t *testing.T) (*Model, string, []byte) {
	t.Helper()
	b, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, path, b
}

// TestCutShortUnderPredict cuts the model file to 0 bytes after Open: the
// fault of Predict's workers is an error naming the file (it was a SIGBUS
// crash).
func TestCutShortUnderPredict(t *testing.T) {
	if _, err := os.Stat("/proc/self/maps"); err != nil {
		t.Skip("no /proc/self/maps: faults are not named on this system")
	}
	m, path, _ := openCopy(t)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	w := make([]float64, 2*m.K())
	err := m.Predict(context.Background(), []float64{0, 0, 4, 1}, 2, w, Options{Workers: 2})
	if err == nil || !strings.Contains(err.Error(), path+": a read of the mapped file faulted") {
		t.Fatalf("error %v, want the fault naming %s", err, path)
	}
}

// TestUnchanged checks that a model file written to in place after Open
// (a copy over it, of the same length: no fault, but mixed bytes) is
// refused, and that a model renamed into place over it is not a change of
// the open file.
func TestUnchanged(t *testing.T) {
	m, path, b := openCopy(t)
	if err := m.Unchanged(); err != nil {
		t.Fatalf("untouched: %v", err)
	}
	next := path + ".new"
	if err := os.WriteFile(next, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	if err := m.Unchanged(); err != nil {
		t.Fatalf("replaced by a rename: %v", err)
	}
	m2, path2, b2 := openCopy(t)
	time.Sleep(20 * time.Millisecond) // past the file system's clock tick
	if err := os.WriteFile(path2, b2, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m2.Unchanged(); err == nil || !strings.Contains(err.Error(), "written to while in use") {
		t.Fatalf("copied over in place: error %v, want it refused", err)
	}
}
