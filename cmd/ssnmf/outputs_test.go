//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
