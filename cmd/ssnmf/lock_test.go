//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/store/workdir"
)

// lockArgs is a short run of the built-in yeast data on the dense kernel.
func lockArgs(work string) []string {
	return []string{"solve", "-affinity", "gaussian", "-method", "fw", "-k", "4", "-gamma", "1", "-max-iter", "30", "-tile", "200",
		"-workdir", work, "-q"}
}

// waitLockedBy waits until the lock file of work names the process pid.
func waitLockedBy(t *testing.T, work string, pid int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(work, workdir.LockFile))
		if strings.HasPrefix(string(b), strconv.Itoa(pid)+" ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lock file of %s does not name process %d after 30s: %q", work, pid, b)
		}
	}
}

// Two real processes on one work directory: the second is refused with one
// line naming the directory, the first's process id and host, and what to
// do, before it writes anything; the first ends as a lone run does.
func TestWorkdirLockTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ssnmf as child processes")
	}
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.csv")
	if code, _, stderr := ssnmf(t, append(lockArgs(filepath.Join(dir, "ref")), "-out", ref)...); code != exitOK {
		t.Fatalf("lone run: exit %d: %s", code, stderr)
	}

	// The first run's -summary is a named pipe: it holds the lock and
	// waits, at the opening of its outputs, until the test reads the pipe.
	work, first, second := filepath.Join(dir, "work"), filepath.Join(dir, "first.csv"), filepath.Join(dir, "second.csv")
	fifo := filepath.Join(dir, "summary.pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cmd := command(append(lockArgs(work), "-out", first, "-summary", fifo)...)
	var firstErr bytes.Buffer
	cmd.Stderr = &firstErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	t.Cleanup(func() {
		if !done {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	waitLockedBy(t, work, cmd.Process.Pid)

	for _, args := range [][]string{
		append(lockArgs(work), "-out", second),
		{"solve", "-resume", work, "-out", second, "-q"},
	} {
		other := command(args...)
		var stderr bytes.Buffer
		other.Stderr = &stderr
		err := other.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
			t.Fatalf("%v: %v, want exit %d; stderr: %s", args, err, exitUsage, stderr.String())
		}
		host, _ := os.Hostname()
		msg := stderr.String()
		t.Logf("second process: %s", strings.TrimSpace(msg))
		for _, want := range []string{work + ": in use by process " + strconv.Itoa(cmd.Process.Pid), "on host " + host, "(since ", "wait for it to end"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q lacks %q", msg, want)
			}
		}
		if strings.Count(msg, "\n") != 1 {
			t.Errorf("message is not one line: %q", msg)
		}
		if _, err := os.Stat(second); !os.IsNotExist(err) {
			t.Errorf("the refused run wrote %s (%v)", second, err)
		}
	}

	summary, err := os.ReadFile(fifo) // lets the first run go on
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	done = true
	if err != nil {
		t.Fatalf("first run: %v: %s", err, firstErr.String())
	}
	var s map[string]any
	if err := json.Unmarshal(summary, &s); err != nil || s["iterations"] != 30.0 {
		t.Errorf("summary read from the pipe: %v, iterations %v; want JSON with 30", err, s["iterations"])
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("-summary %s is no longer a named pipe (%v)", fifo, err)
	}
	want, _ := os.ReadFile(ref)
	if got, err := os.ReadFile(first); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the first run's memberships differ from a lone run's (%v)", err)
	}
	if b, _ := os.ReadFile(filepath.Join(work, workdir.LockFile)); len(b) != 0 {
		t.Errorf("lock file holds %q after the run, want it empty", b)
	}
}

// The lock of a run killed by SIGKILL goes with its process: the lock file
// still names it, but -resume takes the lock and ends the run.
func TestKilledRunDoesNotBlockResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ssnmf as child processes")
	}
	work := filepath.Join(t.TempDir(), "work")
	cmd := command(resumeArgs(work)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); checkpointIter(t, work) < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no checkpoint after 30s")
		}
	}
	waitLockedBy(t, work, cmd.Process.Pid)
	cmd.Process.Signal(syscall.SIGKILL)
	if err := cmd.Wait(); err == nil {
		t.Skip("the run ended before it was killed")
	}
	if b, _ := os.ReadFile(filepath.Join(work, workdir.LockFile)); !strings.HasPrefix(string(b), strconv.Itoa(cmd.Process.Pid)+" ") {
		t.Fatalf("lock file holds %q, want the killed process's line", b)
	}
	code, stdout, stderr := ssnmf(t, "solve", "-resume", work, "-q")
	if code != exitOK || !strings.Contains(stdout, "after 70 iterations") {
		t.Fatalf("resume after a kill: exit %d: %s%s", code, stdout, stderr)
	}
}

// A lock held in this process (flock locks belong to open files) refuses
// solve -workdir and solve -resume on the directory; once it is released,
// the resume goes on.
func TestWorkdirLockInProcess(t *testing.T) {
	work := filepath.Join(t.TempDir(), "work")
	if code, _, stderr := ssnmf(t, append(lockArgs(work), "-max-iter", "2", "-checkpoint-every", "1")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	l, err := workdir.Acquire(work)
	if err != nil {
		t.Fatal(err)
	}
	testUsage(t, nil, []usageCase{
		{name: "workdir", args: lockArgs(work), want: "-workdir " + work + ": in use by process " + strconv.Itoa(os.Getpid())},
		{name: "resume", args: []string{"solve", "-resume", work}, want: "-resume " + work + ": in use by process " + strconv.Itoa(os.Getpid())},
	})
	l.Close()
	if code, _, stderr := ssnmf(t, "solve", "-resume", work, "-max-iter", "3", "-q"); code != exitOK {
		t.Fatalf("resume after the lock is released: exit %d: %s", code, stderr)
	}
}
