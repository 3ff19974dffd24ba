//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// Every output flag writes to /dev/null, as the guide says an output that
// is not a regular file is written in place: -out, -o and plot's -o were
// refused for its lack of an extension ("unknown extension"). /dev/null
// stays the device.
func TestOutputsToDevNull(t *testing.T) {
	dir := t.TempDir()
	const data = "testdata/small.csv"
	model, tr := filepath.Join(dir, "m"), filepath.Join(dir, "t.csv")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-model", model, "-trace", tr, data); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"solve", "-q", "-k", "3", "-out", os.DevNull, data},
		{"solve", "-q", "-k", "3", "-summary", os.DevNull, "-trace", os.DevNull, data},
		{"predict", "-q", "-model", model, "-out", os.DevNull, data},
		{"graph", "-q", "-neighbors", "4", "-o", os.DevNull, data},
		{"tiles", "-q", "-o", os.DevNull, data},
		{"gen", "-q", "-n", "10", "-o", os.DevNull},
		{"plot", "-o", os.DevNull, tr},
	} {
		if code, _, stderr := ssnmf(t, args...); code != exitOK {
			t.Errorf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("after %s, %s is no longer a character device (%v)", strings.Join(args, " "), os.DevNull, err)
		}
	}
}

// A named pipe whose name has no extension gets the memberships as CSV.
func TestOutputToPipeWithoutExtension(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-out", fifo, "testdata/small.csv"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b := <-got; !bytes.HasPrefix(b, []byte("id,w1,w2,w3,cluster,confidence\n0,")) {
		t.Errorf("the pipe's reader got %q, want the memberships as CSV", b)
	}
}

// A second signal aborts a run blocked on an output that is a named pipe
// without a reader: the run ends with exit 1, says so, and removes its
// temporary work directory. It used to wait for ever, which only SIGKILL
// ended, leaving the directory behind.
func TestSecondSignalAbortsPipeOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ssnmf as a child process")
	}
	dir := t.TempDir()
	fifo, tmp := filepath.Join(dir, "pipe.csv"), filepath.Join(dir, "tmp")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := command("solve", "-q", "-k", "3", "-out", fifo, "testdata/small.csv")
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) { // the work directory is made before the outputs are opened
		if es, _ := os.ReadDir(tmp); len(es) > 0 {
			break
		}
		if time.Since(start) > 10*time.Second {
			cmd.Process.Kill()
			t.Fatalf("no work directory in %s after 10 s: %s", tmp, stderr.String())
		}
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitFailure {
			t.Fatalf("exit %v, want %d: %s", err, exitFailure, stderr.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running 10 s after the second signal: %s", stderr.String())
	}
	const want = "-out: writing " // then the pipe, and the open abandoned
	if msg := stderr.String(); !strings.Contains(msg, want) || !strings.HasSuffix(msg, "gave up waiting for a reader of the named pipe: aborted by a second signal\n") {
		t.Errorf("stderr %q, want the abandoned open of -out", msg)
	}
	if es, _ := os.ReadDir(tmp); len(es) != 0 {
		t.Errorf("the aborted run left %s in %s", es[0].Name(), tmp)
	}
}
