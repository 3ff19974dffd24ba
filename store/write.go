package store

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ssnmf/ssnmf/store/vfs"
)

// AtomicFile is an output file written under a temporary name in the
// directory of its final path. Commit moves it into place with one rename;
// Abort removes it. Either way an earlier file at the path is never seen
// half written. Writes are buffered.
//
// An output that cannot be replaced by a rename is written directly
// instead: a path that exists and is not a regular file (a character
// device such as /dev/null or a terminal, a named pipe, /dev/stdout when it
// is one of those), and a writer given to WriteThrough (standard output).
// Commit then flushes and closes it, and Abort closes it; what was written
// before a failure stays written.
type AtomicFile struct {
	fs     vfs.FS
	path   string   // the path given, for messages
	target string   // the path renamed to: path with symbolic links resolved
	f      vfs.File // the temporary file, or the direct file; nil for WriteThrough
	bw     *bufio.Writer
	direct bool // written in place, not renamed
	done   bool
	stop   func() bool // ends the watch of the context of a direct file
}

// CreateAtomic starts writing the file at path. It fails at once if the
// directory of path does not exist or is not writable, or if path is a
// directory, so that a program can check its outputs before long work.
// It is CreateAtomicFS on the operating system's file system.
func CreateAtomic(path string) (*AtomicFile, error) {
	return CreateAtomicFS(vfs.OS{}, path)
}

// CreateAtomicFS is CreateAtomicContext without a context: an output
// written in place waits for its reader as long as it takes.
func CreateAtomicFS(fsys vfs.FS, path string) (*AtomicFile, error) {
	return CreateAtomicContext(context.Background(), fsys, path)
}

// CreateAtomicContext is CreateAtomic on the file system fsys: the
// temporary file, the rename and the syncs of the AtomicFile all go
// through fsys.
//
// If path is a symbolic link to a regular file, the file it points to is
// replaced (the temporary file is made beside it), and the link is kept. If
// path exists and is not a regular file, or is a link whose target has no
// path (a /proc link to a deleted file), it is opened for writing
// (fsys.OpenWrite; a named pipe waits for its reader) and written directly.
// Such a wait ends when ctx is done: the open's, and a write's to a named
// pipe or a terminal whose reader does not read.
//
// Once ctx is done, every write to the file fails with context.Cause(ctx)
// (wrapped), so that a long output stops at its next buffer and Commit
// fails, leaving an earlier file at path as it was.
//
// The temporary file is locked while it is open, and the empty temporary
// files of path that killed writers left beside it are removed first
// (removeStale).
func CreateAtomicContext(ctx context.Context, fsys vfs.FS, path string) (*AtomicFile, error) {
	fi, err := fsys.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("writing %s: is a directory", path)
	case err == nil && !fi.Mode().IsRegular():
		return openDirect(ctx, fsys, path)
	}
	target := path
	if err == nil {
		// A link through /proc to a deleted file (/dev/stdout, say) has no
		// path to rename to: the file is written in place.
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return openDirect(ctx, fsys, path)
		}
	}
	dir := filepath.Dir(target)
	if fi, err := fsys.Stat(dir); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("writing %s: %s is not a directory", path, dir)
	}
	removeStale(fsys, dir, filepath.Base(target))
	f, err := fsys.CreateTemp(dir, tempPattern(filepath.Base(target)))
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	lockTemp(f)
	w := stoppable{ctx: ctx, w: f}
	return &AtomicFile{fs: fsys, path: path, target: target, f: f, bw: bufio.NewWriterSize(w, 64<<10)}, nil
}

// WrittenInPlace reports whether path is an output that CreateAtomicFS
// writes in place: it exists and is neither a regular file nor a
// directory (a device such as /dev/null or a terminal, a named pipe). The
// name of such an output need not name its format by an extension.
func WrittenInPlace(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && !fi.Mode().IsRegular()
}

// openDirect opens path to be written in place. Once ctx is done, a write
// waiting for the reader of a file that has write deadlines (a named pipe
// or a terminal, through the runtime's poller) ends at once.
func openDirect(ctx context.Context, fsys vfs.FS, path string) (*AtomicFile, error) {
	f, err := fsys.OpenWrite(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	stop := context.AfterFunc(ctx, func() {
		if d, ok := f.(interface{ SetWriteDeadline(time.Time) error }); ok {
			d.SetWriteDeadline(time.Now()) // a file without a poller has no deadline to set
		}
	})
	w := stoppable{ctx: ctx, w: f}
	return &AtomicFile{fs: fsys, path: path, f: f, bw: bufio.NewWriterSize(w, 64<<10), direct: true, stop: stop}, nil
}

// stoppable is the writer under an AtomicFile's buffer: once ctx is done
// it writes nothing more, and a write that fails then (a direct file's, at
// the deadline openDirect set) reports the cause of the stop, not the
// deadline.
type stoppable struct {
	ctx context.Context
	w   io.Writer
}

func (s stoppable) Write(p []byte) (int, error) {
	if s.ctx.Err() != nil {
		return 0, fmt.Errorf("abandoned a write: %w", context.Cause(s.ctx))
	}
	n, err := s.w.Write(p)
	if err != nil && s.ctx.Err() != nil {
		err = fmt.Errorf("abandoned a write: %w", context.Cause(s.ctx))
	}
	return n, err
}

// WriteThrough returns an AtomicFile that writes directly to w, named name
// in its errors: an output, such as standard output, that is not a file
// of a path. Commit flushes it, and neither Commit nor Abort closes w.
func WriteThrough(w io.Writer, name string) *AtomicFile {
	return &AtomicFile{path: name, bw: bufio.NewWriterSize(w, 64<<10), direct: true}
}

// Direct reports whether the file is written in place, not under a
// temporary name: see AtomicFile.
func (a *AtomicFile) Direct() bool { return a.direct }

// Write writes p to the temporary file (or the direct output).
func (a *AtomicFile) Write(p []byte) (int, error) { return a.bw.Write(p) }

// Commit flushes and syncs the file, gives it mode 0644, renames it to its
// final path and syncs the directory, so that the rename survives a crash.
// If a step before the rename fails the temporary file is removed and an
// earlier file at the path is left as it was. A direct output is only
// flushed and closed.
//
// If only the sync of the directory fails, the new file is already
// complete at the path, and Abort does nothing; Commit still returns the
// error, saying so. It is reported, not ignored, because a caller that is
// told the file is in place may act on it, deleting what the file
// replaces or going on from a checkpoint, while after a crash the earlier
// file could come back: a failed directory sync (an I/O error) means the
// rename is not known to be on disk.
func (a *AtomicFile) Commit() error {
	if a.done {
		return fmt.Errorf("writing %s: already committed or aborted", a.path)
	}
	if a.direct {
		a.done = true
		err := a.bw.Flush()
		if a.stop != nil {
			a.stop()
		}
		if a.f != nil {
			if cerr := a.f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", a.path, err)
		}
		return nil
	}
	err := a.bw.Flush()
	if err == nil {
		err = a.f.Chmod(0o644)
	}
	if err == nil {
		err = a.f.Sync()
	}
	if err == nil {
		err = a.f.Close()
	}
	if err == nil {
		err = a.fs.Rename(a.f.Name(), a.target)
	}
	if err != nil {
		a.Abort()
		return fmt.Errorf("writing %s: %w", a.path, err)
	}
	a.done = true
	if err := a.fs.SyncDir(filepath.Dir(a.target)); err != nil {
		return fmt.Errorf("writing %s: the file is complete, but its rename may not survive a crash: %w", a.path, err)
	}
	return nil
}

// Abort removes the temporary file. It does nothing after Commit, so it can
// be deferred. It has nothing to report: the temporary file may already be
// closed, and if it cannot be removed there is nothing better to do than
// leave it, under its dot name beside the untouched earlier file. A direct
// output is closed (not w of WriteThrough), keeping what was written.
func (a *AtomicFile) Abort() {
	if a.done {
		return
	}
	a.done = true
	if a.stop != nil {
		a.stop()
	}
	if a.f == nil {
		return
	}
	a.f.Close() // may already be closed; the error does not matter
	if !a.direct {
		a.fs.Remove(a.f.Name()) // best effort, see above
	}
}

// WriteFileAtomic writes a file by calling write on an AtomicFile and
// committing it; on any error the temporary file is removed and an existing
// file at path is left untouched. The new file has mode 0644. It is
// WriteFileAtomicFS on the operating system's file system.
func WriteFileAtomic(path string, write func(w io.Writer) error) error {
	return WriteFileAtomicFS(vfs.OS{}, path, write)
}

// WriteFileAtomicFS is WriteFileAtomic on the file system fsys. As with
// Commit, an error from the sync of the directory alone leaves the new
// file complete at path.
func WriteFileAtomicFS(fsys vfs.FS, path string, write func(w io.Writer) error) error {
	a, err := CreateAtomicFS(fsys, path)
	if err != nil {
		return err
	}
	if err := write(a); err != nil {
		a.Abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return a.Commit()
}

// WriteMembershipCSV writes W (n×k, row-major) as CSV with header
// id,w1..wk,cluster,confidence: id is the 0-based row index, cluster the
// 0-based argmax of the row, ties to the lowest index, confidence the
// row's largest membership; floats are formatted with
// strconv.FormatFloat(v, 'g', -1, 64) so they read back bit-exactly.
func WriteMembershipCSV(w io.Writer, W []float64, n, k int) error {
	if err := checkMembership(W, n, k); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	line := make([]byte, 0, 32*(k+2))
	line = append(line, "id,"...)
	for j := range k {
		line = append(line, 'w')
		line = strconv.AppendInt(line, int64(j+1), 10)
		line = append(line, ',')
	}
	line = append(line, "cluster,confidence\n"...)
	bw.Write(line) // bufio.Writer keeps any error for Flush
	for i := range n {
		row := W[i*k : (i+1)*k]
		line = strconv.AppendInt(line[:0], int64(i), 10)
		for _, v := range row {
			line = append(line, ',')
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
		}
		c := Argmax(row)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(c), 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, row[c], 'g', -1, 64)
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			break // bufio.Writer keeps the error for Flush
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("membership matrix: %w", err)
	}
	return nil
}

// Argmax returns the index of the largest entry of row, the lowest index on
// ties. NaN entries are never chosen unless every entry is NaN, in which case
// Argmax returns 0. Argmax returns -1 if row is empty.
func Argmax(row []float64) int {
	best := -1
	for i, v := range row {
		if math.IsNaN(v) {
			continue
		}
		if best < 0 || v > row[best] {
			best = i
		}
	}
	if best < 0 && len(row) > 0 {
		return 0
	}
	return best
}
