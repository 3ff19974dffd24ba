//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// copyFile copies the file src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An output that is an input, or the same file as another output, is
// refused before any work with one line naming both, and every file is
// left as it was: the cases of the issue, and links, a resumed run's
// input, graph, tiles and plot.
func TestOutputClashes(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	copyFile(t, "testdata/small.csv", at("yin.csv"))
	copyFile(t, "testdata/small.csv", at("gin.csv"))
	if err := os.Symlink(at("yin.csv"), at("link.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(at("yin.csv"), at("hard.csv")); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := ssnmf(t, "graph", "-q", "-o", at("edges.csv"), at("yin.csv")); code != exitOK {
		t.Fatalf("graph: exit %d: %s", code, stderr)
	}
	work := at("work")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-method", "fw", "-max-iter", "3", "-checkpoint-every", "1", "-workdir", work, at("yin.csv")); code != exitOK {
		t.Fatalf("run to resume: exit %d: %s", code, stderr)
	}
	if err := os.WriteFile(at("t.png"), []byte("iter,seconds,objective,gap,step_size,passes\n0,0,1,1,0,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() {
			before[e.Name()], _ = os.ReadFile(at(e.Name()))
		}
	}
	solve := []string{"solve", "-q", "-k", "3"}
	for _, tc := range []struct {
		name string
		args []string
		want []string // in the one line
	}{
		{"out is INPUT", append(solve, at("yin.csv"), "-out", at("yin.csv")), []string{"-out " + at("yin.csv"), "INPUT " + at("yin.csv")}},
		{"summary is INPUT", append(solve, at("yin.csv"), "-summary", at("yin.csv")), []string{"-summary", "INPUT"}},
		{"trace is INPUT", append(solve, at("yin.csv"), "-trace", at("yin.csv")), []string{"-trace", "INPUT"}},
		{"out is INPUT, another spelling", append(solve, at("yin.csv"), "-out", dir+"/missing/../yin.csv"), []string{"-out", "INPUT"}},
		{"out is INPUT through a link", append(solve, at("link.csv"), "-out", at("yin.csv")), []string{"-out " + at("yin.csv"), "INPUT " + at("link.csv")}},
		{"out is INPUT by a hard link", append(solve, at("hard.csv"), "-out", at("yin.csv")), []string{"-out", "INPUT " + at("hard.csv")}},
		{"out is the affinity file", append(solve, at("yin.csv"), "-affinity", at("edges.csv"), "-out", at("edges.csv")), []string{"-out", "-affinity " + at("edges.csv")}},
		{"out is summary", append(solve, at("yin.csv"), "-out", at("same.csv"), "-summary", at("same.csv")), []string{"-out " + at("same.csv") + " and -summary " + at("same.csv"), "one output would be lost"}},
		{"summary is trace", append(solve, at("yin.csv"), "-summary", at("s.json"), "-trace", at("s.json")), []string{"-summary", "-trace", "same file"}},
		{"summary and trace to stdout", append(solve, at("yin.csv"), "-summary", "-", "-trace", "-"), []string{"-summary - and -trace -"}},
		{"resume out is its INPUT", []string{"solve", "-q", "-resume", work, "-out", at("yin.csv")}, []string{"-out", "INPUT " + at("yin.csv")}},
		{"graph o is INPUT", []string{"graph", "-q", "-o", at("gin.csv"), at("gin.csv")}, []string{"-o " + at("gin.csv"), "INPUT " + at("gin.csv")}},
		{"tiles o is INPUT", []string{"tiles", "-q", "-o", at("gin.csv"), at("gin.csv")}, []string{"-o", "INPUT"}},
		{"plot o is a trace", []string{"plot", "-o", at("t.png"), at("t.png")}, []string{"-o", "TRACE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := ssnmf(t, tc.args...)
			if code != exitUsage || strings.Count(stderr, "\n") != 1 || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and one line", code, stdout, stderr, exitUsage)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("message %q lacks %q", stderr, w)
				}
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if e.IsDir() {
					continue
				}
				was, ok := before[e.Name()]
				if !ok {
					t.Errorf("the refused run made %s", e.Name())
				} else if b, _ := os.ReadFile(at(e.Name())); !bytes.Equal(b, was) {
					t.Errorf("the refused run changed %s", e.Name())
				}
			}
			if fi, err := os.Lstat(at("link.csv")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("link.csv is no longer a link (%v)", err)
			}
		})
	}
	// Outputs that are the same character device lose nothing.
	if code, _, stderr := ssnmf(t, append(solve, at("yin.csv"), "-summary", os.DevNull, "-trace", os.DevNull)...); code != exitOK {
		t.Errorf("-summary and -trace %s: exit %d: %s", os.DevNull, code, stderr)
	}
}

// -summary - writes the summary, alone, to stdout, and -trace - the trace:
// the result table then stays off stdout.
func TestOutputsToStdout(t *testing.T) {
	code, stdout, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-summary", "-", "testdata/small.csv")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(stdout), &s); err != nil || s["k"] != 3.0 {
		t.Fatalf("stdout is not the summary alone (%v):\n%s", err, stdout)
	}
	code, stdout, stderr = ssnmf(t, "solve", "-q", "-k", "3", "-trace", "-", "testdata/small.csv")
	if code != exitOK || !strings.HasPrefix(stdout, "iter,seconds,objective,gap,") || strings.Contains(stdout, "objective ") {
		t.Fatalf("exit %d, stdout not the trace alone:\n%s%s", code, stdout, stderr)
	}
}

// An output that is a named pipe, or a link to one (as /dev/stdout is to
// the pipe of a shell's "|"), is written into the pipe, and the pipe and
// the link stay as they were: never replaced by a regular file.
func TestOutputToPipe(t *testing.T) {
	dir := t.TempDir()
	fifo, link := filepath.Join(dir, "pipe"), filepath.Join(dir, "stdout")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	code, stdout, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-summary", link, "testdata/small.csv")
	if code != exitOK || !strings.Contains(stdout, "cluster sizes") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	var s map[string]any
	if b := <-got; json.Unmarshal(b, &s) != nil || s["k"] != 3.0 {
		t.Errorf("the pipe's reader got %q, want the summary", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a link (%v)", link, err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a named pipe (%v)", fifo, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%s holds %d entries, want the pipe and the link", dir, len(entries))
	}
}

// A -model directory that clashes with another output, the work directory
// or the input, or that a model cannot be saved in, is refused before any
// work with one line, and nothing is written (issue 34, items 6 and 7:
// found only after the solve, with outputs partly written, or not at all
// for -method penalty, whose model predict refused).
func TestModelClashes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		args  []string // in dir; "IN" is the input
		want  string
	}{
		{name: "out is model", args: []string{"-out", "X.csv", "-model", "X.csv"}, want: "-out X.csv and -model X.csv are the same file"},
		{name: "summary is model", args: []string{"-out", "o.csv", "-summary", "Y", "-model", "Y"}, want: "-summary Y and -model Y are the same file"},
		{name: "workdir is model", args: []string{"-workdir", "D", "-model", "D"}, want: "the work directory D is -model D or inside it"},
		{name: "workdir inside model", args: []string{"-workdir", "M/w", "-model", "M"}, want: "the work directory M/w is -model M or inside it"},
		{name: "out inside model", setup: func(t *testing.T, dir string) { mkdir(t, filepath.Join(dir, "M")) },
			args: []string{"-out", "M/o.csv", "-summary", "s.json", "-model", "M"}, want: "-out M/o.csv is inside the -model directory M"},
		{name: "trace inside a new model", args: []string{"-trace", "M/t.csv", "-model", "M"}, want: "-trace M/t.csv is inside the -model directory M"},
		{name: "model is a symbolic link", setup: func(t *testing.T, dir string) {
			mkdir(t, filepath.Join(dir, "real"))
			if err := os.Symlink("real", filepath.Join(dir, "L")); err != nil {
				t.Fatal(err)
			}
		}, args: []string{"-out", "o.csv", "-model", "L"}, want: "model directory L: is a symbolic link (to real)"},
		{name: "model's parent missing", args: []string{"-out", "o.csv", "-model", "none/m"},
			want: "-model: model directory none/m: the directory it goes in: stat none: no such file or directory"},
		{name: "model's parent a file", setup: func(t *testing.T, dir string) { copyFile(t, "testdata/small.csv", filepath.Join(dir, "F")) },
			args: []string{"-out", "o.csv", "-model", "F/m"}, want: "-model: model directory F/m: stat F/m: not a directory"},
		{name: "penalty", args: []string{"-method", "penalty", "-out", "o.csv", "-model", "m"},
			want: "-model applies to -affinity knn or gaussian and any -method but penalty (the W of -method penalty may leave the simplex"},
		{name: "resume: work directory is model", setup: func(t *testing.T, dir string) {
			if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-workdir", filepath.Join(dir, "W"), "-max-time", "1ns", filepath.Join(dir, "in.csv")); code != exitOK {
				t.Fatalf("run to resume: exit %d: %s", code, stderr)
			}
		}, args: []string{"-resume", "W", "-model", "W"}, want: "-model: model directory W: holds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyFile(t, "testdata/small.csv", filepath.Join(dir, "in.csv"))
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			before := listTree(t, dir)
			t.Chdir(dir)
			args := append([]string{"solve", "-q"}, tc.args...)
			if !slices.Contains(tc.args, "-resume") {
				args = append(args, "-k", "3", "in.csv")
			}
			code, stdout, stderr := ssnmf(t, args...)
			if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and one line with %q", code, stdout, stderr, exitUsage, tc.want)
			}
			if after := listTree(t, dir); !slices.Equal(after, before) {
				t.Errorf("the refused run changed the files: %v, before %v", after, before)
			}
		})
	}
}

// mkdir makes the directory path.
func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// listTree returns the paths under dir with their sizes, sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var list []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		list = append(list, fmt.Sprintf("%s %d", path, info.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return list
}
