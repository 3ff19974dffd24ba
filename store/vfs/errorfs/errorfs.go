// Package errorfs makes a file system fail on purpose: an [FS] wraps a
// vfs.FS, counts the operations that can fail while a file is written
// (create, write, chmod, sync, close, rename, remove, sync of a directory,
// open of an existing file)
// and fails the N-th of them with [ErrInjected]. A test runs a writer for
// N = 1, 2, 3, ... until the fault no longer fires, and so checks what a
// failure at every step of the writer leaves on disk.
//
// The failed operation is not carried out: the inner file system never sees
// it. The operations after it are carried out as usual, so that the
// writer's clean-up runs on the real file system.
package errorfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/ssnmf/ssnmf/store/vfs"
)

// ErrInjected is the error that every injected fault wraps.
var ErrInjected = errors.New("injected fault")

// Op is a kind of operation that an FS counts.
type Op uint8

// The kinds of operations an FS counts. FS.Stat and File.Name cannot fail
// a write and are not counted.
const (
	OpCreate  Op = iota // FS.CreateTemp
	OpWrite             // File.Write
	OpChmod             // File.Chmod
	OpSync              // File.Sync
	OpClose             // File.Close
	OpRename            // FS.Rename
	OpRemove            // FS.Remove
	OpSyncDir           // FS.SyncDir
	OpOpen              // FS.OpenWrite
	numOps
)

var opNames = [numOps]string{"create", "write", "chmod", "sync", "close", "rename", "remove", "syncdir", "open"}

// String returns the name of the operation, as the message of a fault
// gives it: "create", "write", "chmod", "sync", "close", "rename",
// "remove", "syncdir" or "open".
func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Fault is the error of an injected fault: the operation and the path it
// was given. It wraps ErrInjected.
type Fault struct {
	Op   Op
	Path string // for OpRename, "old -> new"; for OpCreate, the directory joined with the pattern
}

// Error returns a one-line message such as
// "injected fault: sync /x/.out.csv.tmp123".
func (f *Fault) Error() string { return fmt.Sprintf("%v: %v %s", ErrInjected, f.Op, f.Path) }

// Unwrap returns ErrInjected.
func (f *Fault) Unwrap() error { return ErrInjected }

// FS is a vfs.FS that fails the failAt-th operation it counts, 1-based,
// with a *Fault; failAt 0 fails none. Its methods, and those of the files
// it creates, may be called concurrently: the count is kept under a mutex.
type FS struct {
	inner  vfs.FS
	failAt int
	kinds  [numOps]bool // the kinds that are counted

	mu       sync.Mutex
	ops      int
	injected *Fault
}

var _ vfs.FS = (*FS)(nil)

// New returns an FS over inner that fails the failAt-th counted operation.
// Every kind of operation is counted unless kinds are given; then only
// those are counted, and only they can fail.
func New(inner vfs.FS, failAt int, kinds ...Op) *FS {
	fs := &FS{inner: inner, failAt: failAt}
	for o := range numOps {
		fs.kinds[o] = len(kinds) == 0
	}
	for _, o := range kinds {
		if o >= numOps {
			panic(fmt.Sprintf("errorfs: unknown operation %v", o))
		}
		fs.kinds[o] = true
	}
	return fs
}

// Ops returns the number of operations counted so far, the failed one
// included.
func (fs *FS) Ops() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.ops
}

// Injected reports whether the fault has fired.
func (fs *FS) Injected() bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.injected != nil
}

// Fault returns the fault that fired, or nil if none has.
func (fs *FS) Fault() *Fault {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.injected
}

// Each tries a fault at every operation of run: it calls run with an FS
// over inner that fails the failAt-th operation (of kinds, or of every
// kind if none are given), for failAt = 1, 2, ..., until a call in which
// no fault fires. After each call whose fault fired it calls fired with
// failAt, the fault and the call's error. It returns the number of
// operations of the last call, which had no fault, and that call's error.
func Each(inner vfs.FS, run func(fsys *FS) error, fired func(failAt int, f *Fault, err error), kinds ...Op) (ops int, err error) {
	for failAt := 1; ; failAt++ {
		fsys := New(inner, failAt, kinds...)
		err := run(fsys)
		if !fsys.Injected() {
			return fsys.Ops(), err
		}
		fired(failAt, fsys.Fault(), err)
	}
}

// check counts an operation of kind op on path and returns the fault if it
// is the one to fail.
func (fs *FS) check(op Op, path string) error {
	if !fs.kinds[op] {
		return nil
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.ops++
	if fs.ops != fs.failAt {
		return nil
	}
	fs.injected = &Fault{Op: op, Path: path}
	return fs.injected
}

// CreateTemp creates the file in the inner FS, unless the fault fires.
func (fs *FS) CreateTemp(dir, pattern string) (vfs.File, error) {
	if err := fs.check(OpCreate, filepath.Join(dir, pattern)); err != nil {
		return nil, err
	}
	f, err := fs.inner.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &file{fs: fs, f: f}, nil
}

// Rename renames the file in the inner FS, unless the fault fires.
func (fs *FS) Rename(oldpath, newpath string) error {
	if err := fs.check(OpRename, oldpath+" -> "+newpath); err != nil {
		return err
	}
	return fs.inner.Rename(oldpath, newpath)
}

// Remove removes the file in the inner FS, unless the fault fires.
func (fs *FS) Remove(name string) error {
	if err := fs.check(OpRemove, name); err != nil {
		return err
	}
	return fs.inner.Remove(name)
}

// SyncDir syncs the directory in the inner FS, unless the fault fires.
func (fs *FS) SyncDir(dir string) error {
	if err := fs.check(OpSyncDir, dir); err != nil {
		return err
	}
	return fs.inner.SyncDir(dir)
}

// OpenWrite opens the file in the inner FS, unless the fault fires.
func (fs *FS) OpenWrite(ctx context.Context, name string) (vfs.File, error) {
	if err := fs.check(OpOpen, name); err != nil {
		return nil, err
	}
	f, err := fs.inner.OpenWrite(ctx, name)
	if err != nil {
		return nil, err
	}
	return &file{fs: fs, f: f}, nil
}

// Stat describes the file in the inner FS; it is not counted and never
// fails on purpose.
func (fs *FS) Stat(name string) (os.FileInfo, error) { return fs.inner.Stat(name) }

// file is a vfs.File whose operations fs counts.
type file struct {
	fs *FS
	f  vfs.File
}

func (f *file) Write(p []byte) (int, error) {
	if err := f.fs.check(OpWrite, f.f.Name()); err != nil {
		return 0, err
	}
	return f.f.Write(p)
}

func (f *file) Sync() error {
	if err := f.fs.check(OpSync, f.f.Name()); err != nil {
		return err
	}
	return f.f.Sync()
}

func (f *file) Close() error {
	if err := f.fs.check(OpClose, f.f.Name()); err != nil {
		return err
	}
	return f.f.Close()
}

func (f *file) Chmod(mode os.FileMode) error {
	if err := f.fs.check(OpChmod, f.f.Name()); err != nil {
		return err
	}
	return f.f.Chmod(mode)
}

func (f *file) Name() string { return f.f.Name() }
