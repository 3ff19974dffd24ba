package store

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/store/workdir"
)

// TestRemoveStale leaves temporary files beside an output as killed
// writers, live writers and other programs would, and checks that
// CreateAtomic removes exactly the killed writers' (empty, unlocked, older
// than StaleAge, named as its own), and that its own temporary file is
// locked while it is open.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	put := func(name, text string, mtime time.Time) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return path
	}
	put(".o.csv.tmp123", "", old)        // killed: removed
	put(".o.csv.tmp9", "", old)          // killed: removed
	put(".o.csv.tmp456", "", time.Now()) // just made, not yet locked: kept
	put(".o.csv.tmp789", "x,y\n", old)   // partly written: kept
	put(".o.csv.tmpabc", "", old)        // not CreateTemp's name: kept
	put(".p.csv.tmp1", "", old)          // another output's: kept
	put("o.csv.tmp1", "", old)           // not a dot file: kept
	live := put(".o.csv.tmp42", "", old) // a live writer holds its lock: kept
	f, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := workdir.TryLock(f); !ok {
		t.Skipf("cannot lock here: %v", err)
	}
	a, err := CreateAtomic(filepath.Join(dir, "o.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Abort()
	own, err := os.Open(a.f.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if ok, err := workdir.TryLock(own); ok || err != nil {
		t.Errorf("the new temporary file is not locked (TryLock %v, %v)", ok, err)
	}
	var names []string
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if e.Name() != filepath.Base(a.f.Name()) {
			names = append(names, e.Name())
		}
	}
	want := []string{".o.csv.tmp42", ".o.csv.tmp456", ".o.csv.tmp789", ".o.csv.tmpabc", ".p.csv.tmp1", "o.csv.tmp1"}
	if !slices.Equal(names, want) {
		t.Errorf("left %s, want %s", strings.Join(names, " "), strings.Join(want, " "))
	}
}
