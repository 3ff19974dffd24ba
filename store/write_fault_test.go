package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/store/vfs/errorfs"
)

// writeLines returns a write function for WriteFileAtomicFS that writes
// lines of about 100 bytes, tagged with tag, totalling more than size bytes,
// one Write each, and returns the first error of a Write.
func writeLines(tag string, size int) func(io.Writer) error {
	return func(w io.Writer) error {
		for i, n := 0, 0; n <= size; i++ {
			m, err := fmt.Fprintf(w, "%s line %06d %s\n", tag, i, strings.Repeat("x", 80))
			if err != nil {
				return err
			}
			n += m
		}
		return nil
	}
}

// writeMembership returns a write function for WriteFileAtomicFS that writes
// an n×k membership matrix whose entries depend on seed with
// WriteMembershipCSV, which buffers on its own and keeps the errors of its
// writes for its last flush.
func writeMembership(seed float64, n, k int) func(io.Writer) error {
	W := make([]float64, n*k)
	for i := range W {
		W[i] = 1 / (seed + float64(i))
	}
	return func(w io.Writer) error { return WriteMembershipCSV(w, W, n, k) }
}

// content returns what write writes.
func content(t *testing.T, write func(io.Writer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A write through WriteFileAtomicFS that fails at any step of the file
// system leaves the earlier file as it was and no temporary file; only a
// failed sync of the directory, after the rename, leaves the new file, whole.
func TestWriteFileAtomicFault(t *testing.T) {
	// The kinds of operation that a successful write carries out; Remove
	// only follows a failure.
	pathKinds := []errorfs.Op{errorfs.OpCreate, errorfs.OpWrite, errorfs.OpChmod, errorfs.OpSync,
		errorfs.OpClose, errorfs.OpRename, errorfs.OpSyncDir}
	tests := []struct {
		name      string
		good, new func(io.Writer) error
	}{
		{"lines", writeLines("good", 200<<10), writeLines("new", 300<<10)},
		{"membership CSV", writeMembership(1, 3000, 4), writeMembership(2, 3000, 4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.csv")
			good, want := content(t, tt.good), content(t, tt.new)
			if len(want) <= 3*64<<10 || bytes.Equal(good, want) {
				t.Fatalf("the new content has %d bytes, want more than three buffers of 64 KiB, different from the good one", len(want))
			}
			writeGood := func() {
				t.Helper()
				if err := WriteFileAtomic(path, tt.good); err != nil {
					t.Fatal(err)
				}
			}
			// check reports a difference of the directory from path alone,
			// holding wantContent, the what file.
			check := func(failAt int, wantContent []byte, what string) {
				t.Helper()
				if names := dirNames(t, dir); !slices.Equal(names, []string{"out.csv"}) {
					t.Fatalf("failAt %d: the directory holds %q, want out.csv only", failAt, names)
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, wantContent) {
					t.Fatalf("failAt %d: the file holds %d bytes, want the %d bytes of the %s file", failAt, len(got), len(wantContent), what)
				}
			}
			writeGood()
			tried, seen := 0, map[errorfs.Op]int{}
			ops, err := errorfs.Each(vfs.OS{}, func(fsys *errorfs.FS) error {
				return WriteFileAtomicFS(fsys, path, tt.new)
			}, func(failAt int, fault *errorfs.Fault, err error) {
				tried++
				op := fault.Op
				seen[op]++
				if err == nil {
					t.Fatalf("failAt %d: the fault in %v was not reported", failAt, op)
				}
				msg := err.Error()
				if !errors.Is(err, errorfs.ErrInjected) || strings.Contains(msg, "\n") || !strings.Contains(msg, path) {
					t.Fatalf("failAt %d: error %q, want the injected fault, on one line, naming %s", failAt, msg, path)
				}
				if op != errorfs.OpSyncDir {
					check(failAt, good, "good")
					return
				}
				// The directory is synced after the rename: the new file is
				// in place, whole, and the error says so.
				if !strings.Contains(msg, "complete") {
					t.Errorf("failAt %d: error %q does not say the file is complete", failAt, msg)
				}
				check(failAt, want, "new")
				writeGood()
			})
			if err != nil {
				t.Fatalf("failAt %d, past the %d operations of a write: %v", ops+1, ops, err)
			}
			check(ops+1, want, "new")
			if fi, err := os.Stat(path); err != nil {
				t.Fatal(err)
			} else if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o644 {
				t.Errorf("mode %v, want 0644", fi.Mode().Perm())
			}
			t.Logf("fault points tried: %d (%v)", tried, seen)
			for _, op := range pathKinds {
				if seen[op] == 0 {
					t.Errorf("no fault was tried in %v", op)
				}
			}
			if tried < len(pathKinds) || seen[errorfs.OpWrite] < 3 {
				t.Errorf("%d fault points tried, %d of them in writes; want at least %d, 3", tried, seen[errorfs.OpWrite], len(pathKinds))
			}
		})
	}
}
