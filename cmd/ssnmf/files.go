package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/vfs"
)

// stdoutPath is the path of an output that goes to standard output.
const stdoutPath = "-"

// fileArg is a file named on a command line: by a flag ("-out") or as an
// operand ("INPUT"), and its path.
type fileArg struct{ name, path string }

// checkFiles refuses, before any work, an output that is one of the inputs,
// or the same file as another output, with a one-line usage error naming
// both. Files are compared by their absolute paths with symbolic links
// resolved (of the directory, for a file not there yet) and, where both
// exist, by os.SameFile, which also sees hard links. The output "-" is
// standard output. A character device (/dev/null, a terminal) is not a
// clash: nothing written to it replaces anything. Empty paths are skipped.
func checkFiles(inputs, outputs []fileArg) error {
	var ins, outs []resolvedFile
	for _, f := range inputs {
		if f.path != "" {
			ins = append(ins, resolveFile(f, false))
		}
	}
	for _, f := range outputs {
		if f.path != "" {
			outs = append(outs, resolveFile(f, true))
		}
	}
	for i, o := range outs {
		for _, in := range ins {
			if o.same(in) {
				return usagef("%s %s would overwrite %s %s; write it to another file", o.name, o.path, in.name, in.path)
			}
		}
		for _, p := range outs[:i] {
			if o.same(p) {
				return usagef("%s %s and %s %s are the same file, and one output would be lost; give each its own file", p.name, p.path, o.name, o.path)
			}
		}
	}
	return nil
}

// resolvedFile is a fileArg as checkFiles compares it.
type resolvedFile struct {
	fileArg
	key  string      // the absolute path, links resolved; "-" for standard output
	info os.FileInfo // nil if the file does not exist
}

// resolveFile resolves f, whose path "-" is standard output if output.
func resolveFile(f fileArg, output bool) resolvedFile {
	r := resolvedFile{fileArg: f, key: f.path}
	if output && f.path == stdoutPath {
		r.info, _ = os.Stdout.Stat()
		return r
	}
	abs, err := filepath.Abs(f.path)
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
		return r.key == stdoutPath || !charDevice(r.info)
	}
	if r.info == nil || s.info == nil || !os.SameFile(r.info, s.info) {
		return false
	}
	return r.path == stdoutPath || s.path == stdoutPath || !charDevice(r.info)
}

func charDevice(fi os.FileInfo) bool { return fi != nil && fi.Mode()&fs.ModeCharDevice != 0 }

// writesStdout reports whether one of the output paths is standard output:
// "-", or a path such as /dev/stdout that is not a regular file and is the
// file of this process's standard output. The result table then stays off
// standard output, which carries the output alone.
func writesStdout(paths ...string) bool {
	out, err := os.Stdout.Stat()
	for _, p := range paths {
		if p == stdoutPath {
			return true
		}
		if fi, serr := os.Stat(p); p != "" && err == nil && serr == nil && !fi.Mode().IsRegular() && os.SameFile(fi, out) {
			return true
		}
	}
	return false
}

// createOutput starts writing the output of the flag name at path: to
// stdout if path is "-", else with store.CreateAtomicContext, so that the
// end of ctx (a second signal) ends a wait for the reader of a named
// pipe, in the open or in a write. An output that cannot be opened is a
// usage error; an open abandoned because ctx is done is not.
func createOutput(ctx context.Context, fsys vfs.FS, name, path string, stdout io.Writer) (*store.AtomicFile, error) {
	if path == stdoutPath {
		return store.WriteThrough(stdout, "standard output"), nil
	}
	a, err := store.CreateAtomicContext(ctx, fsys, path)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	case err != nil:
		return nil, usagef("%s: %w", name, err)
	}
	return a, nil
}
