package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/store/workdir"
)

// StaleAge is how long a temporary file must have been left unchanged
// before it may be taken for a killed process's (when no process holds
// its lock): longer than the moment between its creation and its lock.
const StaleAge = 10 * time.Second

// tempPattern is the pattern of CreateTemp for the temporary file of an
// atomic write of the file base: ".base.tmp" and a random number.
func tempPattern(base string) string { return "." + base + ".tmp*" }

// isTemp reports whether name is a temporary file of an atomic write of
// the file base, as tempPattern names it.
func isTemp(name, base string) bool {
	digits, ok := strings.CutPrefix(name, "."+base+".tmp")
	return ok && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// lockTemp locks the temporary file f of an atomic write for as long as it
// is open, so that removeStale never takes it for a killed writer's. A
// file that cannot be locked stays unlocked: removeStale then cannot
// lock it either, and leaves it.
func lockTemp(f vfs.File) {
	if osf, ok := f.(*os.File); ok {
		workdir.TryLock(osf)
	}
}

// removeStale removes, from the directory dir, the temporary files that
// atomic writes of the file base left when their process was killed
// (SIGKILL, a crash, the machine's end), which nothing else removes: the
// files named as tempPattern names them that are provably stale, that is
// empty (an output's bytes are written when it is complete), unchanged for
// StaleAge, and locked by no process (a live writer holds the lock of its
// temporary file from its creation, lockTemp; the kernel releases it when
// the process dies). Anything else is left, as is every file on a file
// system that cannot lock. It has nothing to report: the write goes on
// either way.
func removeStale(fsys vfs.FS, dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !isTemp(e.Name(), base) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fi, err := e.Info()
		if err != nil || fi.Size() != 0 || time.Since(fi.ModTime()) < StaleAge {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		if ok, _ := workdir.TryLock(f); ok {
			fsys.Remove(path)
		}
		f.Close()
	}
}

// RemoveTemps removes from dir the temporary files of atomic writes of
// the files names, whatever their size or age. It is for a directory that
// the caller holds locked (a work directory, package workdir), in which no
// other process writes, so that each such file is a killed run's; it has
// nothing to report.
func RemoveTemps(dir string, names ...string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		for _, base := range names {
			if e.Type().IsRegular() && isTemp(e.Name(), base) {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// LockedTempDir makes a new directory in os.TempDir() whose name is prefix
// and a random suffix (os.MkdirTemp), and locks it (package workdir) until
// the caller closes the lock, which tells a later LockedTempDir of the
// same prefix that the directory is in use; the lock is nil where the file
// system cannot lock. Before, it removes the directories of prefix that
// processes killed outright (SIGKILL) left there (removeStaleDirs).
func LockedTempDir(prefix string, files ...string) (string, *workdir.Lock, error) {
	removeStaleDirs(os.TempDir(), prefix, files)
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	lock, err := workdir.Acquire(dir)
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, lock, nil
}

// removeStaleDirs removes from parent the directories of LockedTempDir of
// prefix whose processes were killed outright, which nothing else removes:
// those provably a dead process's, that is named with prefix, holding only
// regular files named files or workdir.LockFile, among them the lock file,
// unchanged for StaleAge (it is written once the lock is taken), and whose
// lock no process holds (the kernel releases a lock when its process
// dies). Anything else is left, a directory without a lock file too.
func removeStaleDirs(parent, prefix string, files []string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	foreign := func(f os.DirEntry) bool {
		return !f.Type().IsRegular() || f.Name() != workdir.LockFile && !slices.Contains(files, f.Name())
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		fi, err := os.Stat(filepath.Join(dir, workdir.LockFile))
		if err != nil || time.Since(fi.ModTime()) < StaleAge {
			continue
		}
		inside, err := os.ReadDir(dir)
		if err != nil || slices.ContainsFunc(inside, foreign) {
			continue
		}
		if lock, err := workdir.Acquire(dir); err == nil {
			os.RemoveAll(dir)
			lock.Close()
		}
	}
}
