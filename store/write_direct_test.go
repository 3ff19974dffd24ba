//go:build unix

package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/store/vfs"
)

// A symbolic link to a regular file is kept, and the file it points to is
// replaced.
func TestCreateAtomicThroughLink(t *testing.T) {
	dir := t.TempDir()
	real, link := filepath.Join(dir, "sub", "real.csv"), filepath.Join(dir, "link.csv")
	if err := os.Mkdir(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(link, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link (%v)", link, err)
	}
	if b, err := os.ReadFile(real); err != nil || string(b) != "new\n" {
		t.Errorf("%s holds %q (%v), want new", real, b, err)
	}
	if names := dirNames(t, filepath.Dir(real)); !slices.Equal(names, []string{"real.csv"}) {
		t.Errorf("%s holds %v, want only real.csv", filepath.Dir(real), names)
	}
}

// A character device is written in place: no temporary file is made
// beside it, and it stays a device.
func TestCreateAtomicCharDevice(t *testing.T) {
	const null = "/dev/null"
	a, err := CreateAtomic(null)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Direct() {
		t.Fatalf("%s is not written directly", null)
	}
	if _, err := io.WriteString(a, "discarded\n"); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	a.Abort() // after Commit, nothing
	fi, err := os.Stat(null)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v, %v", null, fi.Mode(), err)
	}
}

// A named pipe is written in place, to its reader, and stays a pipe.
func TestCreateAtomicFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(fifo) // opens for reading, which lets the writer's open go on
		got <- b
	}()
	if err := WriteFileAtomic(fifo, func(w io.Writer) error { _, err := io.WriteString(w, "through the pipe\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "through the pipe\n" {
		t.Errorf("reader got %q", b)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a named pipe (%v)", fifo, err)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"pipe"}) {
		t.Errorf("%s holds %v, want only the pipe", dir, names)
	}
}

// WriteThrough writes to its writer when committed, and never closes it.
func TestWriteThrough(t *testing.T) {
	var buf bytes.Buffer
	a := WriteThrough(&buf, "standard output")
	io.WriteString(a, "hello\n")
	if buf.Len() != 0 {
		t.Errorf("written before Commit: %q (writes are buffered)", buf.String())
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "hello\n" {
		t.Errorf("writer holds %q", buf.String())
	}
	if err := a.Commit(); err == nil {
		t.Error("a second Commit succeeded")
	}
	b := WriteThrough(&buf, "standard output")
	b.Abort()
	b.Abort()
}

// The waits of a named pipe's writer end with the context: the open's for
// a reader, and a write's to a reader that does not read; the error wraps
// the cause of the cancellation. Without the context both would wait for
// ever (a second signal did not abort a run blocked so).
func TestCreateAtomicContextPipe(t *testing.T) {
	aborted := errors.New("aborted by the test")
	for _, tc := range []struct {
		name   string
		reader bool // a reader opens the pipe and never reads
	}{{"no reader", false}, {"a reader that does not read", true}} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "pipe")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			if tc.reader {
				r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			time.AfterFunc(200*time.Millisecond, func() { cancel(aborted) })
			done := make(chan error, 1)
			go func() {
				a, err := CreateAtomicContext(ctx, vfs.OS{}, fifo)
				if err != nil {
					done <- err
					return
				}
				defer a.Abort()
				if _, err := a.Write(make([]byte, 4<<20)); err != nil { // far more than a pipe holds
					done <- err
					return
				}
				done <- a.Commit()
			}()
			select {
			case err := <-done:
				if !errors.Is(err, aborted) {
					t.Fatalf("error %v, want one wrapping %v", err, aborted)
				}
				t.Log(err)
			case <-time.After(10 * time.Second):
				os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0) // lets a waiting open go on
				t.Fatal("the writer still waits 10 s after its context ended")
			}
		})
	}
}
