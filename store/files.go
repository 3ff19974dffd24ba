package store

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ssnmf/ssnmf/store/vfs"
)

// StdoutPath is the path of an output that goes to standard output.
const StdoutPath = "-"

// A NamedFile is a file named by a program's settings: by what names it
// (a flag such as "-out", an operand such as "INPUT"), and its path.
type NamedFile struct{ Name, Path string }

// CheckFiles refuses, before any work, an output that is one of the
// inputs, or the same file as another output, with an error naming both.
// Files are compared by their absolute paths with symbolic links resolved
// (of the directory, for a file not there yet) and, where both exist, by
// os.SameFile, which also sees hard links. The output StdoutPath is
// standard output. A character device (/dev/null, a terminal) is not a
// clash: nothing written to it replaces anything. Empty paths are skipped.
func CheckFiles(inputs, outputs []NamedFile) error {
	var ins, outs []resolvedFile
	for _, f := range inputs {
		if f.Path != "" {
			ins = append(ins, resolveFile(f, false))
		}
	}
	for _, f := range outputs {
		if f.Path != "" {
			outs = append(outs, resolveFile(f, true))
		}
	}
	for i, o := range outs {
		for _, in := range ins {
			if o.same(in) {
				return fmt.Errorf("%s %s would overwrite %s %s; write it to another file", o.Name, o.Path, in.Name, in.Path)
			}
		}
		for _, p := range outs[:i] {
			if o.same(p) {
				return fmt.Errorf("%s %s and %s %s are the same file, and one output would be lost; give each its own file", p.Name, p.Path, o.Name, o.Path)
			}
		}
	}
	return nil
}

// Within reports whether the output path is the directory dir or inside
// it, both resolved as CheckFiles resolves an output.
func Within(dir, path string) bool {
	d := resolveFile(NamedFile{Path: dir}, true).key
	key := resolveFile(NamedFile{Path: path}, true).key
	return key == d || strings.HasPrefix(key, d+string(filepath.Separator))
}

// resolvedFile is a NamedFile as CheckFiles compares it.
type resolvedFile struct {
	NamedFile
	key  string      // the absolute path, links resolved; "-" for standard output
	info os.FileInfo // nil if the file does not exist
}

// resolveFile resolves f, whose path StdoutPath is standard output if
// output.
func resolveFile(f NamedFile, output bool) resolvedFile {
	r := resolvedFile{NamedFile: f, key: f.Path}
	if output && f.Path == StdoutPath {
		r.info, _ = os.Stdout.Stat()
		return r
	}
	abs, err := filepath.Abs(f.Path)
	if err != nil {
		return r
	}
	r.key = abs
	if fi, err := os.Stat(abs); err == nil {
		r.info = fi
		if p, err := filepath.EvalSymlinks(abs); err == nil {
			r.key = p
		}
	} else if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		r.key = filepath.Join(d, filepath.Base(abs))
	}
	return r
}

// same reports whether r and s are the same file, in a way that loses
// what is written to one of them.
func (r resolvedFile) same(s resolvedFile) bool {
	if r.key == s.key {
		return r.key == StdoutPath || !charDevice(r.info)
	}
	if r.info == nil || s.info == nil || !os.SameFile(r.info, s.info) {
		return false
	}
	return r.Path == StdoutPath || s.Path == StdoutPath || !charDevice(r.info)
}

func charDevice(fi os.FileInfo) bool { return fi != nil && fi.Mode()&fs.ModeCharDevice != 0 }

// WritesStdout reports whether one of the output paths is standard
// output: StdoutPath, or a path such as /dev/stdout that is not a regular
// file and is the file of this process's standard output.
func WritesStdout(paths ...string) bool {
	out, err := os.Stdout.Stat()
	for _, p := range paths {
		if p == StdoutPath {
			return true
		}
		if fi, serr := os.Stat(p); p != "" && err == nil && serr == nil && !fi.Mode().IsRegular() && os.SameFile(fi, out) {
			return true
		}
	}
	return false
}

// CreateOutput starts writing the output at path: to stdout if path is
// StdoutPath, else with CreateAtomicContext, so that the end of ctx ends
// a wait for the reader of a named pipe, in the open or in a write. Either
// way, writes fail with context.Cause(ctx) once ctx is done.
func CreateOutput(ctx context.Context, fsys vfs.FS, path string, stdout io.Writer) (*AtomicFile, error) {
	if path == StdoutPath {
		return WriteThrough(stoppable{ctx: ctx, w: stdout}, "standard output"), nil
	}
	return CreateAtomicContext(ctx, fsys, path)
}

// Outputs are the files of one run, written together: Commit moves every
// one into place once all are written, and Abort removes those not yet
// committed. A nil entry is an output not asked for.
type Outputs []*AtomicFile

// Commit commits every output, in order.
func (o Outputs) Commit() error {
	for _, a := range o {
		if a != nil {
			if err := a.Commit(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Abort removes the outputs not yet committed.
func (o Outputs) Abort() {
	for _, a := range o {
		if a != nil {
			a.Abort()
		}
	}
}
