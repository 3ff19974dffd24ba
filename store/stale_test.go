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

// TestLockedTempDir leaves directories in $TMPDIR as killed, live and
// other processes would, and checks that LockedTempDir removes exactly
// the killed ones of its prefix, and makes its own directory, locked.
func TestLockedTempDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	old := time.Now().Add(-time.Hour)
	cases := []struct {
		dir   string
		files []string
		kept  bool
	}{
		{"run-1", []string{"lock", "a.mat", "b.mat"}, false},    // killed
		{"run-2", []string{"lock"}, false},                      // killed at its start
		{"run-3", []string{"lock", "a.mat"}, true},              // running: its lock is held below
		{"run-4", []string{"a.mat", "b.mat"}, true},             // no lock file
		{"run-5", []string{"lock", "a.mat", "notes.txt"}, true}, // not only its files
		{"other-6", []string{"lock", "a.mat"}, true},            // another prefix
	}
	var want []string
	for _, tc := range cases {
		if tc.kept {
			want = append(want, tc.dir)
		}
		for _, f := range tc.files {
			path := filepath.Join(tmp, tc.dir, f)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("1234 host 2026-01-01T00:00:00Z\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	live, err := workdir.Acquire(filepath.Join(tmp, "run-3"))
	if err != nil {
		t.Skipf("cannot lock here: %v", err)
	}
	defer live.Close()
	filepath.WalkDir(tmp, func(path string, _ os.DirEntry, _ error) error { return os.Chtimes(path, old, old) })

	dir, lock, err := LockedTempDir("run-", "a.mat", "b.mat")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := workdir.Acquire(dir); err == nil {
		t.Errorf("%s is not locked", dir)
	}
	var left []string
	es, _ := os.ReadDir(tmp)
	for _, e := range es {
		if filepath.Join(tmp, e.Name()) != dir {
			left = append(left, e.Name())
		}
	}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}
