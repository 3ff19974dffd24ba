package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/vfs"
)

// checkFiles is store.CheckFiles, its refusal a usage error.
func checkFiles(inputs, outputs []store.NamedFile) error {
	if err := store.CheckFiles(inputs, outputs); err != nil {
		return usageError{err}
	}
	return nil
}

// createOutput starts writing the output of the flag name at path
// (store.CreateOutput): the end of ctx (a second signal) ends a wait for
// the reader of a named pipe. An output that cannot be opened is a usage
// error; an open abandoned because ctx is done is not.
func createOutput(ctx context.Context, fsys vfs.FS, name, path string, stdout io.Writer) (*store.AtomicFile, error) {
	a, err := store.CreateOutput(ctx, fsys, path, stdout)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	case err != nil:
		return nil, usagef("%s: %w", name, err)
	}
	return a, nil
}
