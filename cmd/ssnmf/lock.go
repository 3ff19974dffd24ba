package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/store/workdir"
)

// lockWorkdir locks the work directory dir, named by the flag name, for the
// rest of the run (package workdir): a second process is refused with one
// line naming the holder, and advice on what to do. Where the file system
// cannot lock, the run goes on without a lock, with a warning on warn (none
// if warn is nil, for a temporary directory no other process knows of).
// The lock returned may be nil; Close does nothing then.
//
// Once locked, the directory's temporaries that a killed run left (an
// unfinished graph, a checkpoint's temporary file) are removed: the lock
// proves that no live run writes them.
func lockWorkdir(name, dir, advice string, warn io.Writer) (*workdir.Lock, error) {
	l, err := solver.LockWorkdir(dir)
	var busy *workdir.BusyError
	switch {
	case err == nil:
		return l, nil
	case errors.As(err, &busy):
		return nil, usagef("%s %v; %s", name, err, advice)
	case errors.Is(err, errors.ErrUnsupported):
		if warn != nil {
			fmt.Fprintf(warn, "ssnmf: warning: %s %s: cannot lock it (%v); nothing keeps another run out of it\n", name, dir, err)
		}
		return nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, usagef("%s %s: no such directory", name, dir)
	}
	return nil, fmt.Errorf("%s %s: %w", name, dir, err)
}
