package errorfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ssnmf/ssnmf/store/vfs"
)

// step is one operation of a script that writes a file through an FS.
type step struct {
	op Op
	do func() error
	// notDone reports whether the operation left no trace, after it failed.
	notDone func() bool
	// checkOps is the number of operations notDone counts.
	checkOps int
}

// script returns the steps that write "abc" to dir/a through fsys and
// remove it again, in order, with the path each names.
func script(t *testing.T, fsys vfs.FS, dir string) ([]step, func(Op) string) {
	var f vfs.File
	final := filepath.Join(dir, "a")
	exists := func(name string) bool { _, err := os.Stat(name); return err == nil }
	empty := func() bool {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return len(entries) == 0
	}
	size := func(name string) int64 {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	unobservable := func() bool { return true } // a sync leaves no trace to check
	steps := []step{
		{op: OpCreate, do: func() (err error) { f, err = fsys.CreateTemp(dir, "a.tmp*"); return err }, notDone: empty},
		{op: OpWrite, do: func() error { _, err := f.Write([]byte("abc")); return err }, notDone: func() bool { return size(f.Name()) == 0 }},
		{op: OpChmod, do: func() error { return f.Chmod(0o640) }, notDone: func() bool {
			fi, err := os.Stat(f.Name())
			if err != nil {
				t.Fatal(err)
			}
			return runtime.GOOS == "windows" || fi.Mode().Perm() == 0o600 // CreateTemp's mode
		}},
		{op: OpSync, do: func() error { return f.Sync() }, notDone: unobservable},
		{op: OpClose, do: func() error { return f.Close() }, notDone: func() bool {
			return f.Close() == nil // a closed file cannot be closed again
		}, checkOps: 1},
		{op: OpRename, do: func() error { return fsys.Rename(f.Name(), final) }, notDone: func() bool { return exists(f.Name()) && !exists(final) }},
		{op: OpSyncDir, do: func() error { return fsys.SyncDir(dir) }, notDone: unobservable},
		{op: OpOpen, do: func() error {
			g, err := fsys.OpenWrite(context.Background(), final)
			if err == nil {
				g.(*file).f.Close() // uncounted, so that the script's count stays one a step
			}
			return err
		}, notDone: unobservable},
		{op: OpRemove, do: func() error { return fsys.Remove(final) }, notDone: func() bool { return exists(final) }},
	}
	path := func(op Op) string {
		switch op {
		case OpCreate:
			return filepath.Join(dir, "a.tmp*")
		case OpRename:
			return f.Name() + " -> " + final
		case OpSyncDir:
			return dir
		case OpRemove, OpOpen:
			return final
		}
		return f.Name()
	}
	return steps, path
}

// The failAt-th counted operation, and only it, fails with a Fault naming
// it, and is not carried out.
func TestFS(t *testing.T) {
	all := []Op{OpCreate, OpWrite, OpChmod, OpSync, OpClose, OpRename, OpSyncDir, OpOpen, OpRemove}
	type fsTest struct {
		name   string
		kinds  []Op // counted, all if empty
		failAt int
		want   Op   // the kind that fails, if fires
		fires  bool // whether the fault fires
	}
	tests := []fsTest{
		{name: "never", failAt: 0},
		{name: "past the end", failAt: 10},
		{name: "only syncs, past the end", kinds: []Op{OpSync, OpSyncDir}, failAt: 3},
		{name: "only syncs, the directory's", kinds: []Op{OpSync, OpSyncDir}, failAt: 2, want: OpSyncDir, fires: true},
		{name: "only removes", kinds: []Op{OpRemove}, failAt: 1, want: OpRemove, fires: true},
	}
	for i, op := range all {
		tests = append(tests, fsTest{name: op.String(), failAt: i + 1, want: op, fires: true})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fsys := New(vfs.OS{}, tt.failAt, tt.kinds...)
			steps, path := script(t, fsys, dir)
			counted, failed := 0, false
			for _, s := range steps {
				if len(tt.kinds) == 0 || slices.Contains(tt.kinds, s.op) {
					counted++
				}
				err := s.do()
				if err == nil {
					continue
				}
				var fault *Fault
				if !tt.fires || !errors.As(err, &fault) || fault.Op != s.op || s.op != tt.want || !errors.Is(err, ErrInjected) {
					t.Fatalf("%v: error %v, want the fault only at %v", s.op, err, tt.want)
				}
				if want := "injected fault: " + s.op.String() + " " + path(s.op); err.Error() != want {
					t.Errorf("message %q, want %q", err, want)
				}
				if !s.notDone() {
					t.Errorf("the failed %v was carried out", s.op)
				}
				counted += s.checkOps
				if fsys.Fault() != fault || !fsys.Injected() {
					t.Errorf("Fault() = %v, Injected() = %v after the fault %v", fsys.Fault(), fsys.Injected(), fault)
				}
				failed = true
				break
			}
			if fsys.Injected() != tt.fires || failed != tt.fires {
				t.Errorf("Injected() = %v, an operation failed: %v, want %v", fsys.Injected(), failed, tt.fires)
			}
			if !tt.fires {
				if fsys.Fault() != nil {
					t.Errorf("Fault() = %v without a fault", fsys.Fault())
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Errorf("the script left %v", entries)
				}
			}
			if fsys.Ops() != counted {
				t.Errorf("Ops() = %d, want %d", fsys.Ops(), counted)
			}
		})
	}
}

// The operations after the fault are carried out, and Stat is neither
// counted nor failed.
func TestFSAfterFault(t *testing.T) {
	dir := t.TempDir()
	fsys := New(vfs.OS{}, 1)
	if err := fsys.SyncDir(dir); !errors.Is(err, ErrInjected) {
		t.Fatalf("first SyncDir: %v, want the fault", err)
	}
	if _, err := fsys.Stat(dir); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		t.Fatalf("second SyncDir: %v", err)
	}
	if err := fsys.Remove(filepath.Join(dir, "missing")); err == nil || errors.Is(err, ErrInjected) {
		t.Fatalf("Remove of a missing file: %v, want the inner FS's error", err)
	}
	if fsys.Ops() != 3 {
		t.Errorf("Ops() = %d, want 3", fsys.Ops())
	}
}

// Concurrent operations are counted once each, and exactly one fails.
func TestFSConcurrent(t *testing.T) {
	const goroutines, each, failAt = 8, 25, 77
	dir := t.TempDir()
	fsys := New(vfs.OS{}, failAt)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var faults []error
	for range goroutines {
		wg.Go(func() {
			for range each {
				if err := fsys.SyncDir(dir); err != nil {
					mu.Lock()
					faults = append(faults, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(faults) != 1 || !errors.Is(faults[0], ErrInjected) {
		t.Fatalf("errors %v, want one injected fault", faults)
	}
	if fsys.Ops() != goroutines*each || !fsys.Injected() {
		t.Errorf("Ops() = %d, Injected() = %v, want %d, true", fsys.Ops(), fsys.Injected(), goroutines*each)
	}
}

func TestOpString(t *testing.T) {
	tests := []struct {
		op   Op
		want string
	}{
		{OpCreate, "create"},
		{OpWrite, "write"},
		{OpChmod, "chmod"},
		{OpSync, "sync"},
		{OpClose, "close"},
		{OpRename, "rename"},
		{OpRemove, "remove"},
		{OpSyncDir, "syncdir"},
		{OpOpen, "open"},
		{numOps, "Op(9)"},
	}
	for _, tt := range tests {
		if got := tt.op.String(); got != tt.want {
			t.Errorf("Op(%d).String() = %q, want %q", uint8(tt.op), got, tt.want)
		}
	}
	if msg := (&Fault{Op: OpSync, Path: "/x/y.tmp1"}).Error(); msg != "injected fault: sync /x/y.tmp1" || strings.Contains(msg, "\n") {
		t.Errorf("message %q", msg)
	}
}

// TestEach checks that Each fails every operation of a run once, in order,
// and ends with the run that has no fault.
func TestEach(t *testing.T) {
	dir := t.TempDir()
	var got []Op
	ops, err := Each(vfs.OS{}, func(fsys *FS) error {
		f, err := fsys.CreateTemp(dir, "x*")
		if err != nil {
			return err
		}
		if _, err := f.Write([]byte("x")); err != nil {
			return err
		}
		return f.Close()
	}, func(failAt int, f *Fault, err error) {
		if !errors.Is(err, ErrInjected) || len(got) != failAt-1 {
			t.Fatalf("fault %d (%v): error %v, after %d faults", failAt, f, err, len(got))
		}
		got = append(got, f.Op)
	})
	if err != nil || ops != 3 || !slices.Equal(got, []Op{OpCreate, OpWrite, OpClose}) {
		t.Fatalf("Each: %d operations, %v, faults %v; want 3, nil, create write close", ops, err, got)
	}
}
