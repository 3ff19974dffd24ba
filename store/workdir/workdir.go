// Package workdir keeps one process at a time in a run's work directory.
//
// A run of ssnmf keeps memory-mapped matrices, a CSR graph and a
// checkpoint in its work directory and rewrites them as it goes; a second
// process writing into the same directory at the same time truncates the
// files the first has mapped (a SIGBUS) or silently mixes two runs' state.
// [Acquire] takes an exclusive lock on the file [LockFile] in the directory
// (flock(2), LOCK_EX|LOCK_NB), which the process holds until [Lock.Close]
// or its end: the kernel releases it when the process exits or is killed,
// so a lock left by a dead process never blocks the next run. The lock
// file also holds the holder's process id, host and start time, for the
// message of a second process that is refused ([BusyError]); the file is
// left in place, as removing it would race with a process about to lock it.
//
// Where the file system cannot lock (flock fails with ENOLCK, ENOTSUP,
// ENOSYS or EINVAL, as some network file systems answer, or on systems
// without flock), Acquire returns an error that wraps
// errors.ErrUnsupported, so that a caller can go on without a lock and
// say so.
package workdir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LockFile is the name of the lock file in a work directory.
const LockFile = "lock"

// Holder is the process that holds a lock, as it wrote itself into the
// lock file: "PID HOST START" on one line, START in RFC 3339.
type Holder struct {
	PID   int
	Host  string
	Since time.Time
}

func (h Holder) String() string {
	if h.PID == 0 {
		return "another process (it has not yet written its process id)"
	}
	return fmt.Sprintf("process %d on host %s (since %s)", h.PID, h.Host, h.Since.UTC().Format(time.RFC3339))
}

// BusyError is the error of Acquire when another process holds the lock.
type BusyError struct {
	Dir    string
	Holder Holder // the zero Holder if the lock file could not be read
}

// Error returns one line such as
// "/scratch/run7: in use by process 1234 on host n12 (since 2026-11-25T16:40:00Z)".
func (e *BusyError) Error() string { return e.Dir + ": in use by " + e.Holder.String() }

// Lock is an exclusive lock on a work directory, held until Close.
type Lock struct {
	f   *os.File
	dir string
}

// Acquire locks the directory dir, which must exist, for this process, or
// returns a *BusyError if another process (or another Acquire of this
// process) holds it.
func Acquire(dir string) (*Lock, error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lock(f); err != nil {
		defer f.Close()
		if errors.Is(err, errLocked) {
			return nil, &BusyError{Dir: dir, Holder: readHolder(f)}
		}
		return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	host, _ := os.Hostname()
	if host == "" {
		host = "unknown"
	}
	line := fmt.Sprintf("%d %s %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(line), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("writing %s: %w", f.Name(), err)
	}
	return &Lock{f: f, dir: dir}, nil
}

// Dir returns the locked directory.
func (l *Lock) Dir() string { return l.dir }

// Close releases the lock, emptying the lock file first so that it names
// no process. It may be called more than once.
func (l *Lock) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.f.Truncate(0) // best effort: the lock, not the file's text, is what counts
	err := l.f.Close()
	l.f = nil
	return err
}

// readHolder reads the holder from the lock file f, which another process
// has locked. That process writes its line just after it locks, so an
// empty file is read again for a short while.
func readHolder(f *os.File) Holder {
	for try := 0; ; try++ {
		b, err := io.ReadAll(io.NewSectionReader(f, 0, 4096))
		if h, ok := parseHolder(string(b)); ok || err != nil || try == 20 {
			return h
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// parseHolder parses the line "PID HOST START" of a lock file.
func parseHolder(s string) (Holder, bool) {
	fields := strings.Fields(s)
	if len(fields) != 3 {
		return Holder{}, false
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil || pid <= 0 {
		return Holder{}, false
	}
	since, err := time.Parse(time.RFC3339, fields[2])
	if err != nil {
		return Holder{}, false
	}
	return Holder{PID: pid, Host: fields[1], Since: since}, true
}

// TryLock takes the lock that Acquire takes of a work directory's lock
// file, an exclusive flock without waiting, of any open file f, for as
// long as f stays open (or the process lives). It reports whether it took
// the lock: false with a nil error if another open file holds it, and an
// error, wrapping errors.ErrUnsupported where the file system cannot
// lock, if it could not tell.
func TryLock(f *os.File) (bool, error) {
	switch err := lock(f); {
	case err == nil:
		return true, nil
	case errors.Is(err, errLocked):
		return false, nil
	default:
		return false, err
	}
}
