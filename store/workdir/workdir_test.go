package workdir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A second Acquire of a locked directory, even by the same process (flock
// locks belong to open files), is refused with a BusyError naming the
// holder; after Close the directory can be locked again.
func TestAcquireBusy(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, LockFile))
	if err != nil || !strings.HasPrefix(string(b), strconv.Itoa(os.Getpid())+" ") {
		t.Fatalf("lock file holds %q (%v), want this process's id first", b, err)
	}
	_, err = Acquire(dir)
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("second Acquire: %v, want a *BusyError", err)
	}
	host, _ := os.Hostname()
	if busy.Holder.PID != os.Getpid() || busy.Holder.Host != host || time.Since(busy.Holder.Since) > time.Minute {
		t.Errorf("holder %+v, want pid %d on %s, since just now", busy.Holder, os.Getpid(), host)
	}
	msg := err.Error()
	for _, want := range []string{dir, "process " + strconv.Itoa(os.Getpid()), "host " + host, "since "} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("message %q is not one line", msg)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	l2, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Close: %v", err)
	}
	l2.Close()
}

// A lock file left with another process's line, but not locked (its
// process is gone), does not block.
func TestStaleLockFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, LockFile), []byte("999999 elsewhere 2020-01-01T00:00:00Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire over a stale lock file: %v", err)
	}
	defer l.Close()
	b, _ := os.ReadFile(filepath.Join(dir, LockFile))
	if !strings.HasPrefix(string(b), strconv.Itoa(os.Getpid())+" ") {
		t.Errorf("lock file holds %q, want this process's line", b)
	}
}

// Acquire of a missing directory fails without creating it.
func TestAcquireMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	if _, err := Acquire(dir); err == nil || errors.As(err, new(*BusyError)) {
		t.Fatalf("Acquire(%s) = %v, want an error that is not BusyError", dir, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Acquire made %s", dir)
	}
}

func TestParseHolder(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"12 h 2026-11-25T16:40:00Z\n", true},
		{"", false},
		{"12 h", false},
		{"x h 2026-11-25T16:40:00Z", false},
		{"12 h yesterday", false},
	} {
		if _, ok := parseHolder(tc.in); ok != tc.ok {
			t.Errorf("parseHolder(%q) ok = %v, want %v", tc.in, ok, tc.ok)
		}
	}
	if got := (Holder{}).String(); !strings.Contains(got, "another process") {
		t.Errorf("zero Holder = %q", got)
	}
}
