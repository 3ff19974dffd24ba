package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/store/vfs/errorfs"
)

// A SaveFS that fails at any step of the file system leaves the earlier
// checkpoint loadable, byte for byte as it was, and no temporary file; only
// a failed sync of the directory, after the rename, leaves the new
// checkpoint, whole.
func TestSaveFault(t *testing.T) {
	// The kinds of operation that a successful Save carries out; Remove
	// only follows a failure.
	pathKinds := []errorfs.Op{errorfs.OpCreate, errorfs.OpWrite, errorfs.OpChmod, errorfs.OpSync,
		errorfs.OpClose, errorfs.OpRename, errorfs.OpSyncDir}
	const n, k = 3000, 3 // W and P·W of 72 KB each
	fwOld := fwState(n, k)
	rowcd := rowCDState(n, k, 2)
	rowcd.Iter, rowcd.W[0] = 8, 0.25
	tests := []struct {
		name      string
		good, new *oldState
	}{
		{"Frank-Wolfe, then row-CD", fwOld, rowcd},
		{"row-CD, then Frank-Wolfe", rowcd, fwOld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "checkpoint")
			good, next := tt.good.state(), tt.new.state()
			saveGood := func() []byte {
				t.Helper()
				if err := Save(name, good, []byte(testSettings), []byte(testTrace)); err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			// check reports a difference of the directory from name alone,
			// the checkpoint of want, whose bytes are file.
			check := func(failAt int, want *fw.State, file []byte) {
				t.Helper()
				entries, err := os.ReadDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				if len(entries) != 1 || entries[0].Name() != "checkpoint" {
					t.Fatalf("failAt %d: the directory holds %v, want the checkpoint only", failAt, entries)
				}
				if b, err := os.ReadFile(name); err != nil || !bytes.Equal(b, file) {
					t.Fatalf("failAt %d: the checkpoint holds %d bytes (%v), not the %d expected", failAt, len(b), err, len(file))
				}
				c, w, pw := loadFile(t, name)
				checkState(t, c, w, pw, want)
				if string(c.Settings) != testSettings || string(c.Trace) != testTrace {
					t.Fatalf("failAt %d: settings %q, trace %q", failAt, c.Settings, c.Trace)
				}
			}
			before := saveGood()
			// The bytes of the new checkpoint, as Save writes them elsewhere.
			after := saveBytes(t, next)
			if bytes.Equal(after, before) {
				t.Fatal("the two checkpoints are the same")
			}
			tried, seen := 0, map[errorfs.Op]int{}
			ops, err := errorfs.Each(vfs.OS{}, func(fsys *errorfs.FS) error {
				return SaveFS(fsys, name, next, []byte(testSettings), []byte(testTrace))
			}, func(failAt int, fault *errorfs.Fault, err error) {
				tried++
				op := fault.Op
				seen[op]++
				if err == nil {
					t.Fatalf("failAt %d: the fault in %v was not reported", failAt, op)
				}
				msg := err.Error()
				if !errors.Is(err, errorfs.ErrInjected) || strings.Contains(msg, "\n") || !strings.Contains(msg, name) {
					t.Fatalf("failAt %d: error %q, want the injected fault, on one line, naming %s", failAt, msg, name)
				}
				if op != errorfs.OpSyncDir {
					check(failAt, good, before)
					return
				}
				// The directory is synced after the rename: the new
				// checkpoint is in place, whole, and the error says so.
				if !strings.Contains(msg, "complete") {
					t.Errorf("failAt %d: error %q does not say the checkpoint is complete", failAt, msg)
				}
				check(failAt, next, after)
				if b := saveGood(); !bytes.Equal(b, before) {
					t.Fatal("Save wrote the good checkpoint differently the second time")
				}
			})
			if err != nil {
				t.Fatalf("failAt %d, past the %d operations of a Save: %v", ops+1, ops, err)
			}
			check(ops+1, next, after)
			t.Logf("fault points tried: %d (%v)", tried, seen)
			var missing []errorfs.Op
			for _, op := range pathKinds {
				if seen[op] == 0 {
					missing = append(missing, op)
				}
			}
			if len(missing) > 0 || tried < len(pathKinds) {
				t.Errorf("%d fault points tried, none in %v; want at least %d, in every kind of %v", tried, missing, len(pathKinds), pathKinds)
			}
		})
	}
}
