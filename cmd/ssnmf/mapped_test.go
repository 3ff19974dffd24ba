package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/store/workdir"
)

// noDisk skips the test, saying why there is no small disk, or fails it
// if SSNMF_REQUIRE_TMPFS is set (as .ci/run sets it).
func noDisk(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("SSNMF_REQUIRE_TMPFS") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// leftovers returns the names in dir, and below it, other than keep.
func leftovers(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	var left []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		for _, k := range keep {
			if rel == k {
				return nil
			}
		}
		left = append(left, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// TestDiskFull runs solve and predict with their work directories on a
// tmpfs too small for them. The mapped files are reserved before they are
// mapped, so a full disk is an error naming the file and the bytes it
// needed (it was a SIGBUS crash, which left graph.csr.tmp behind), and
// nothing is left: no temporary work directory, no temporary file in a
// -workdir, no temporary output.
func TestDiskFull(t *testing.T) {
	disk, ok := smallDisk(t, "1m")
	if !ok {
		return
	}
	data := t.TempDir()
	x, y := filepath.Join(data, "x.csv"), filepath.Join(data, "y.csv")
	for _, g := range [][]string{
		{"gen", "-n", "3000", "-p", "8", "-k", "3", "-seed", "3", "-o", x},
		{"gen", "-n", "12000", "-p", "8", "-k", "3", "-seed", "4", "-o", y},
		{"solve", "-q", "-k", "3", "-max-iter", "5", "-model", filepath.Join(data, "m"), "-out", filepath.Join(data, "x.w.csv"), x},
	} {
		if code, _, stderr := ssnmf(t, g...); code != 0 {
			t.Fatalf("%v: exit %d: %s", g, code, stderr)
		}
	}
	out := filepath.Join(data, "out.csv")
	t.Setenv("GOMEMLIMIT", "off") // -mem 1MB puts W in a file, and must not hold the test's heap
	for _, c := range []struct {
		name    string
		tmpdir  bool // the work directory is a temporary one in TMPDIR=disk
		args    []string
		want    string
		keepDir []string // what may stay on the disk
	}{
		{"solve -workdir", false, []string{"solve", "-q", "-k", "3", "-workdir", filepath.Join(disk, "wd"), "-out", out, x},
			"wd/graph.csr.tmp: reserving the ", []string{"wd", "wd/lock", "wd/features.mat"}},
		{"solve TMPDIR", true, []string{"solve", "-q", "-k", "3", "-out", out, x}, "graph.csr.tmp: reserving the ", nil},
		{"solve -affinity gaussian", true, []string{"solve", "-q", "-k", "3", "-affinity", "gaussian", "-mem", "1MB", "-out", out, y}, "W.mat: reserving the 292096 bytes (285.2 KiB) the file needs", nil},
		{"predict TMPDIR", true, []string{"predict", "-model", filepath.Join(data, "m"), "-out", out, y}, "W.mat: reserving the 292096 bytes (285.2 KiB) the file needs", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.tmpdir {
				t.Setenv("TMPDIR", disk)
			}
			code, _, stderr := ssnmf(t, c.args...)
			t.Logf("the error line: %s", strings.TrimSpace(stderr))
			if code != exitFailure || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "no space left on device") || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q, want exit %d and one line with %q and ENOSPC", code, stderr, exitFailure, c.want)
			}
			if left := leftovers(t, disk, c.keepDir...); len(left) > 0 {
				t.Errorf("left on the disk: %v", left)
			}
			if left := leftovers(t, data, "x.csv", "y.csv", "m", "m/model.ssnmf", "x.w.csv"); len(left) > 0 {
				t.Errorf("left beside the output: %v", left)
			}
			os.RemoveAll(filepath.Join(disk, "wd"))
		})
	}
}

// cutAt is a progress writer that cuts a file (path, or the one file its
// glob pattern matches) to 0 bytes when the run prints the line that holds
// mark: a file cut short under a running command, at a set point of it.
type cutAt struct {
	mu   sync.Mutex
	mark string
	path string
	done bool
	buf  bytes.Buffer
	err  error
}

func (c *cutAt) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done && bytes.Contains(p, []byte(c.mark)) {
		c.done = true
		paths, err := filepath.Glob(c.path)
		switch {
		case err != nil:
			c.err = err
		case len(paths) != 1:
			c.err = fmt.Errorf("%s matches %d files, want 1", c.path, len(paths))
		default:
			c.err = os.Truncate(paths[0], 0)
		}
	}
	return c.buf.Write(p)
}

// TestCutShortUnderSolve cuts each mapped file of the work directory to 0
// bytes under a running solve, once its set-up is done: the fault is an
// error naming the file (it was a SIGBUS crash), and no temporary output
// is left beside -out. -mem 1MB puts W, P·W and P·S in files.
func TestCutShortUnderSolve(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "off") // -mem must not hold the test's heap
	data := t.TempDir()
	x := filepath.Join(data, "x.csv")
	if code, _, stderr := ssnmf(t, "gen", "-n", "3000", "-p", "8", "-k", "3", "-seed", "3", "-o", x); code != 0 {
		t.Fatal(stderr)
	}
	for _, file := range []string{"W.mat", "PW.mat", "graph.csr", "features.mat"} {
		t.Run(file, func(t *testing.T) {
			wd, out := filepath.Join(t.TempDir(), "wd"), filepath.Join(data, "out.csv")
			stderr := &cutAt{mark: "workdir=", path: filepath.Join(wd, file)}
			code := run(t.Context(), []string{"solve", "-k", "3", "-max-iter", "20", "-mem", "1MB", "-workdir", wd, "-out", out, x}, io.Discard, stderr)
			last := lastLine(stderr.buf.String())
			if stderr.err != nil || !stderr.done {
				t.Fatalf("cutting %s: %v (done %v)", file, stderr.err, stderr.done)
			}
			t.Logf("the error line: %s", last)
			if code != exitFailure || !strings.Contains(last, filepath.Join(wd, file)+": a read") || !strings.Contains(last, "mapped file faulted") {
				t.Fatalf("exit %d, last line %q, want exit %d and the fault of %s", code, last, exitFailure, file)
			}
			if left := leftovers(t, data, "x.csv"); len(left) > 0 {
				t.Errorf("left beside the output: %v", left)
			}
		})
	}
}

// lastLine returns the last line of s.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// TestKilledRunTemps leaves what a solve killed by SIGKILL leaves (an
// empty temporary -out beside the output, an unfinished graph and a
// checkpoint's temporary file in the work directory) and runs again in the
// same work directory: the run removes them (they stayed for good).
func TestKilledRunTemps(t *testing.T) {
	dir := t.TempDir()
	wd, out := filepath.Join(dir, "wd"), filepath.Join(dir, "out.csv")
	if err := os.Mkdir(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, f := range []struct{ path, text string }{
		{filepath.Join(dir, ".out.csv.tmp1234567"), ""},
		{filepath.Join(wd, "graph.csr.tmp"), "SSNMFCSR"},
		{filepath.Join(wd, ".checkpoint.ssnmf.tmp42"), "SSNMFCKP"},
	} {
		if err := os.WriteFile(f.path, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f.path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, stderr := ssnmf(t, "solve", "-q", "-max-iter", "3", "-workdir", wd, "-out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if left := leftovers(t, dir, "out.csv", "wd", "wd/lock", "wd/features.mat", "wd/graph.csr", "wd/W.mat", "wd/PW.mat", "wd/PS.mat", "wd/W.input.mat", "wd/best.mat"); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}

// TestKilledPredictDirs leaves in TMPDIR the temporary directories of
// predicts killed outright, of one still running, and others, and runs a
// predict: it removes the killed ones' only (they stayed for good).
func TestKilledPredictDirs(t *testing.T) {
	data, tmp := t.TempDir(), t.TempDir()
	x := filepath.Join(data, "x.csv")
	for _, g := range [][]string{
		{"gen", "-n", "300", "-p", "4", "-k", "3", "-seed", "3", "-o", x},
		{"solve", "-q", "-k", "3", "-max-iter", "5", "-model", filepath.Join(data, "m"), "-out", filepath.Join(data, "x.w.csv"), x},
	} {
		if code, _, stderr := ssnmf(t, g...); code != 0 {
			t.Fatalf("%v: exit %d: %s", g, code, stderr)
		}
	}
	old := time.Now().Add(-time.Hour)
	put := func(dir string, files ...string) {
		if err := os.MkdirAll(filepath.Join(tmp, dir), 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			path := filepath.Join(tmp, dir, f)
			if err := os.WriteFile(path, []byte("1234 host 2026-01-01T00:00:00Z\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	put("ssnmf-predict-1", "lock", "features.mat", "W.mat")             // killed: removed
	put("ssnmf-predict-2", "lock")                                      // killed at its start: removed
	put("ssnmf-predict-3", "lock", "W.mat")                             // running: kept
	put("ssnmf-predict-4", "features.mat", "W.mat")                     // no lock file (an earlier version's): kept
	put("ssnmf-predict-5", "lock", "W.mat", "notes.txt")                // not predict's files only: kept
	put("ssnmf-6", "lock", "W.mat")                                     // a solve's work directory: kept
	live, err := workdir.Acquire(filepath.Join(tmp, "ssnmf-predict-3")) // its lock file is old, but held
	if err != nil {
		t.Skipf("cannot lock here: %v", err)
	}
	defer live.Close()
	os.Chtimes(filepath.Join(tmp, "ssnmf-predict-3", "lock"), old, old)
	t.Setenv("TMPDIR", tmp)
	if code, _, stderr := ssnmf(t, "predict", "-model", filepath.Join(data, "m"), "-out", filepath.Join(data, "p.csv"), x); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var left []string
	es, _ := os.ReadDir(tmp)
	for _, e := range es {
		left = append(left, e.Name())
	}
	if want := []string{"ssnmf-6", "ssnmf-predict-3", "ssnmf-predict-4", "ssnmf-predict-5"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// TestCutShortUnderGraph cuts the graph to 0 bytes under ssnmf graph,
// once it is built and before its edges are written: the fault is an
// error naming the file (it was a SIGBUS crash), and no temporary output
// nor work directory is left.
func TestCutShortUnderGraph(t *testing.T) {
	data, tmp := t.TempDir(), t.TempDir()
	x := filepath.Join(data, "x.csv")
	if code, _, stderr := ssnmf(t, "gen", "-n", "3000", "-p", "8", "-k", "3", "-seed", "3", "-o", x); code != 0 {
		t.Fatal(stderr)
	}
	t.Setenv("TMPDIR", tmp)
	stderr := &cutAt{mark: "built in", path: filepath.Join(tmp, "*", "graph.csr")}
	code := run(t.Context(), []string{"graph", "-o", filepath.Join(data, "e.csv"), x}, io.Discard, stderr)
	last := lastLine(stderr.buf.String())
	t.Logf("the error line: %s", last)
	if stderr.err != nil || !stderr.done {
		t.Fatalf("cutting the graph: %v (done %v)", stderr.err, stderr.done)
	}
	if code != exitFailure || !strings.Contains(last, "/graph.csr: a read of the mapped file faulted") {
		t.Fatalf("exit %d, last line %q, want exit %d and the fault of graph.csr", code, last, exitFailure)
	}
	if left := leftovers(t, data, "x.csv"); len(left) > 0 {
		t.Errorf("left beside the output: %v", left)
	}
	if left := leftovers(t, tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}
