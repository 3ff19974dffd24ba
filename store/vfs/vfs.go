// Package vfs is the file system through which package store replaces its
// output files: the few operations an atomic write needs (create a temporary
// file, write, chmod, sync and close it, rename it into place, sync the
// directory, remove it on failure), and the opening of an output that is
// not a regular file (a device, a named pipe) to write it directly, behind
// an interface, so that a test can
// put a file system that fails on purpose (package errorfs) under the
// writers and check what a failure at each step leaves on disk. [OS] is the
// real one, over package os.
package vfs

import (
	"context"
	"io"
	"os"
)

// FS is the file system a writer of package store works through. Paths are
// those of package os. The methods of an FS may be called concurrently.
type FS interface {
	// CreateTemp creates a new file in dir, named by pattern as
	// os.CreateTemp names it, opened for writing.
	CreateTemp(dir, pattern string) (File, error)
	// Rename renames oldpath to newpath, replacing a file at newpath.
	Rename(oldpath, newpath string) error
	// Remove removes the file name.
	Remove(name string) error
	// SyncDir flushes the directory dir to stable storage, so that the
	// creations, renames and removals within it survive a crash.
	SyncDir(dir string) error
	// Stat describes the file name, following symbolic links.
	Stat(name string) (os.FileInfo, error)
	// OpenWrite opens the existing file name for writing, without
	// creating it, truncating it if it is a regular file: an output
	// that cannot be replaced by a rename, such as a character device or
	// a named pipe, written in place. The wait of a named pipe for its
	// reader ends when ctx is done, with an error wrapping
	// context.Cause(ctx).
	OpenWrite(ctx context.Context, name string) (File, error)
}

// File is a file opened for writing by FS.CreateTemp or FS.OpenWrite.
type File interface {
	io.Writer
	// Sync flushes the file's contents to stable storage.
	Sync() error
	// Close closes the file; the file is not usable afterwards.
	Close() error
	// Chmod sets the file's mode.
	Chmod(mode os.FileMode) error
	// Name returns the path of the file, as CreateTemp made it.
	Name() string
}

// OS is the FS of the operating system, through package os. It has no
// state; its zero value is ready to use.
type OS struct{}

var (
	_ FS   = OS{}
	_ File = (*os.File)(nil)
)

// CreateTemp creates the file with os.CreateTemp.
func (OS) CreateTemp(dir, pattern string) (File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err // a nil File, not a File holding a nil *os.File
	}
	return f, nil
}

// Rename renames the file with os.Rename.
func (OS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove removes the file with os.Remove.
func (OS) Remove(name string) error { return os.Remove(name) }

// OpenWrite opens the file with os.OpenFile(name, os.O_WRONLY|os.O_TRUNC,
// 0). On a named pipe it waits, as any writer of one does, until a reader
// opens it, or until ctx is done (openPipe). A named pipe or a terminal is
// opened for the runtime's poller, so that a write waiting for the
// reader ends at a write deadline (os.File.SetWriteDeadline).
func (OS) OpenWrite(ctx context.Context, name string) (File, error) {
	if fi, err := os.Stat(name); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
		return openPipe(ctx, name)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return nil, err // a nil File, as CreateTemp returns
	}
	return f, nil
}

// Stat describes the file with os.Stat.
func (OS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }

// SyncDir opens the directory dir and syncs it, on Unix systems; elsewhere,
// where package os cannot sync a directory, it does nothing and returns nil.
func (OS) SyncDir(dir string) error { return syncDir(dir) }
